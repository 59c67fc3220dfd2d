#include "models/compute_path.h"

#include <cstdio>

#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm.h"
#include "layers/linear.h"

namespace edgemt {

void describe_linear_compute_path(const Model& model, const Linear& output, bool output_own_f32,
                                  bool f16_native, const char* own_kernels, char* out, size_t size) {
  char besides[160] = "";
  if (own_kernels != nullptr) std::snprintf(besides, sizeof(besides), "; %s", own_kernels);
  switch (model.weight_dtype()) {
    case DType::kF32:
      if (kernels::f32::replaces_xnnpack()) {
        std::snprintf(out, size, "f32 (own f32 GEMM, %s kernel%s)", kernels::f32::fast_gemm_kernel_name(),
                      besides);
      } else if (output_own_f32) {
        std::snprintf(out, size, "f32 (XNNPACK; tied output projection on the own f32 GEMM, %s kernel%s)",
                      kernels::f32::fast_gemm_kernel_name(), besides);
      } else {
        std::snprintf(out, size, "f32 (XNNPACK%s)", besides);
      }
      return;
    case DType::kF16:
      std::snprintf(out, size, "%s%s)",
                    f16_native ? "f16 (XNNPACK f16 GEMMs: this CPU has fp16 arithmetic; layers between them in f32"
                               : "f32 (f16 weights widened to f32 at load: this CPU has no fp16 arithmetic",
                    besides);
      return;
    case DType::kI8:
      if (model.quantization() == QuantizationScheme::kInt8PerTensorStatic) {
        std::snprintf(out, size,
                      "int8 (%s: own int8 GEMM, %s kernel; activations quantized with each "
                      "product's fixed range from the file, as browsermt Marian with alphas; "
                      "embedding tables in f32%s)",
                      quantization_scheme_name(model.quantization()),
                      kernels::int8::best_gemm_kernel().name, besides);
        return;
      }
      if (model.quantization() == QuantizationScheme::kInt8PerTensorDynamic) {
        // Marian's intgemm8 arithmetic; a tied output projection is the F32 table.
        std::snprintf(out, size,
                      "int8 (%s: own int8 GEMM, %s kernel; activations quantized with one range per "
                      "product at run time, as Marian; embedding tables in f32%s)",
                      quantization_scheme_name(model.quantization()),
                      kernels::int8::best_gemm_kernel().name, besides);
        return;
      }
      // The int8 output projection's kernel (chosen per matrix), or the
      // best kernel's name when the output is an F32 table.
      std::snprintf(out, size,
                    "int8 (%s: own int8 GEMM, %s kernel; activations quantized per row%s%s)",
                    quantization_scheme_name(model.quantization()),
                    output.is_int8() ? output.int8_kernel_name() : kernels::int8::best_gemm_kernel().name,
                    model.table_dtype() == DType::kF32   ? "; embedding tables in f32"
                    : model.table_dtype() == DType::kF16 ? "; embedding tables in f16"
                    : model.residual_tables()            ? "; residual-coded embeddings"
                                                         : "",
                    besides);
      return;
  }
}

}  // namespace edgemt
