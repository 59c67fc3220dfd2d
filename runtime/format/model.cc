// edgemt::Model: a MappedFile, a CopiedFile or a borrowed buffer, plus the VerifiedModel
// the verifier extracted from it. All checks live in model_verifier.cc; this
// file only owns memory and answers accessors.
#include "edgemt/model.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "format/copied_file.h"
#include "format/mapped_file.h"
#include "format/model_verifier.h"
#include "models/expected_tensor.h"

namespace edgemt {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kI8: return "i8";
  }
  return "unknown";
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kI8: return 1;
  }
  return 0;
}

const char* quantization_scheme_name(QuantizationScheme scheme) {
  switch (scheme) {
    case QuantizationScheme::kNone: return "none";
    case QuantizationScheme::kInt8PerRowDynamic: return "int8-per-row-dynamic";
    case QuantizationScheme::kInt8SmoothedPerRowDynamic: return "int8-smoothed-per-row-dynamic";
    case QuantizationScheme::kInt8PerTensorDynamic: return "int8-per-tensor-dynamic";
    case QuantizationScheme::kInt8PerTensorStatic: return "int8-per-tensor-static";
  }
  return "unknown";
}

const char* search_rules_name(SearchRules rules) {
  switch (rules) {
    case SearchRules::kEdgemt: return "edgemt";
    case SearchRules::kOpenNMT: return "opennmt";
    case SearchRules::kMarian: return "marian";
    case SearchRules::kHuggingFace: return "huggingface";
  }
  return "unknown";
}

uint64_t TensorView::element_count() const {
  uint64_t count = 1;
  for (uint32_t i = 0; i < rank && i < kMaxTensorRank; ++i) count *= shape[i];
  return count;
}

struct Model::Impl {
  MappedFile file;        // LoadMode::kMap; unmapped otherwise
  CopiedFile copy;        // LoadMode::kCopy; empty otherwise
  uint64_t file_size = 0;
  VerifiedModel model;
  // A mapped file's vectors, copied (see copy_vectors); 64-byte aligned
  // slots inside it.
  std::unique_ptr<uint8_t[]> vector_copies;
};

namespace {

// Gives a mapped file's vectors (rank-1 tensors: biases, norm weights and
// shifts, scales) a private copy, so that the run phase never reads weight
// pages of the file. Vectors are read in place on every call and sit
// between large matrices in the file, and the kernel maps file pages a
// folio at a time (up to 2 MiB on Linux 6, whose page cache keeps large
// folios): each vector read kept a folio of its neighbours resident, 50 MiB
// for an OPUS-MT-base fp32 file whose matrices the translator had packed
// and dropped. All of a model's vectors take well under 1% of its weights.
// Aliases (views of the same bytes) keep sharing one copy.
Status copy_vectors(Model::Impl* impl) {
  VerifiedModel& model = impl->model;
  const size_t count = model.tensor_count;
  constexpr size_t kAlign = 64;
  const auto slot = [](uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; };
  const std::unique_ptr<TensorView[]> original(new (std::nothrow) TensorView[count]);
  if (!original) return Status::error(StatusCode::kOutOfMemory, "cannot allocate the tensor list");
  for (size_t i = 0; i < count; ++i) original[i] = model.tensors[i];
  // The first view of tensor i's bytes (i itself unless it is an alias).
  const auto first_view = [&original](size_t i) {
    size_t j = 0;
    while (original[j].data != original[i].data || original[j].size_bytes != original[i].size_bytes) ++j;
    return j;
  };
  const auto copied = [&original](size_t i) { return original[i].rank == 1 && original[i].size_bytes > 0; };
  uint64_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    if (copied(i) && first_view(i) == i) total += slot(original[i].size_bytes);
  }
  if (total == 0) return Status::ok();
  impl->vector_copies.reset(new (std::nothrow) uint8_t[total + kAlign]);
  if (!impl->vector_copies) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate %llu bytes for the model's vectors",
                         static_cast<unsigned long long>(total));
  }
  const uintptr_t start = reinterpret_cast<uintptr_t>(impl->vector_copies.get());
  uint8_t* next = impl->vector_copies.get() + (kAlign - start % kAlign) % kAlign;
  for (size_t i = 0; i < count; ++i) {
    if (!copied(i)) continue;
    const size_t first = first_view(i);
    if (first != i) {
      model.tensors[i].data = model.tensors[first].data;  // an alias shares the copy (or the file)
      continue;
    }
    std::memcpy(next, original[i].data, original[i].size_bytes);
    model.tensors[i].data = next;
    next += slot(original[i].size_bytes);
  }
  return Status::ok();
}

// Verifies `data` and wraps it, with `file` and `copy` (either or both
// empty) moved into the Impl.
Status make_model(const uint8_t* data, size_t size, MappedFile file, CopiedFile copy,
                  bool verify_checksum, std::unique_ptr<Model::Impl>* impl) {
  impl->reset(new (std::nothrow) Model::Impl);
  if (!*impl) return Status::error(StatusCode::kOutOfMemory, "cannot allocate the model");
  (*impl)->file = std::move(file);
  (*impl)->copy = std::move(copy);
  (*impl)->file_size = size;
  // Verifying reads every weight; a mapped file's pages are dropped again,
  // each tensor's once checked (so the whole file is never resident) and
  // all at the end (the vectors copied below, pages tensors shared), so
  // that loading keeps at most one matrix resident twice (its file pages
  // and its packed copy) and the run phase holds only what it reads in place.
  const TensorChecked release = [](const void* context, const TensorView& tensor) {
    static_cast<const MappedFile*>(context)->release_pages(tensor.data, tensor.size_bytes);
  };
  VerifyOptions options;
  options.verify_checksum = verify_checksum;
  options.checked = (*impl)->file.is_mapped() ? release : nullptr;
  options.context = &(*impl)->file;
  EDGEMT_RETURN_IF_ERROR(verify_model(data, size, &(*impl)->model, options));
  if ((*impl)->file.is_mapped()) EDGEMT_RETURN_IF_ERROR(copy_vectors(impl->get()));
  const VerifiedModel& model = (*impl)->model;
  for (size_t i = 0; i < model.tensor_count; ++i) {
    (*impl)->file.release_pages(model.tensors[i].data, model.tensors[i].size_bytes);
  }
  return Status::ok();
}


}  // namespace

Model::Model(Impl* impl) : impl_(impl) {}

Status Model::adopt(std::unique_ptr<Impl> impl, std::unique_ptr<Model>* out) {
  out->reset(new (std::nothrow) Model(impl.get()));
  if (!*out) return Status::error(StatusCode::kOutOfMemory, "cannot allocate the model");
  impl.release();
  return Status::ok();
}

Model::~Model() { delete impl_; }

Status Model::load(const char* path, std::unique_ptr<Model>* out) {
  return load(path, LoadOptions(), out);
}

Status Model::load(const char* path, const LoadOptions& options, std::unique_ptr<Model>* out) {
  if (path == nullptr || out == nullptr) {
    return Status::error(StatusCode::kInvalidArgument, "Model::load: null argument");
  }
  out->reset();
  std::unique_ptr<Impl> impl;
  if (options.mode == LoadMode::kCopy) {
    CopiedFile copy;
    EDGEMT_RETURN_IF_ERROR(CopiedFile::read(path, &copy));
    const uint8_t* data = copy.data();
    const size_t size = copy.size();
    EDGEMT_RETURN_IF_ERROR(make_model(data, size, MappedFile(), std::move(copy), options.verify_checksum, &impl));
  } else if (options.mode == LoadMode::kMap) {
    MappedFile file;
    EDGEMT_RETURN_IF_ERROR(MappedFile::open(path, &file));
    const uint8_t* data = file.data();
    const size_t size = file.size();
    EDGEMT_RETURN_IF_ERROR(make_model(data, size, std::move(file), CopiedFile(), options.verify_checksum, &impl));
  } else {
    return Status::error(StatusCode::kInvalidArgument, "Model::load: unknown load mode %d",
                         static_cast<int>(options.mode));
  }
  return adopt(std::move(impl), out);
}

Status Model::from_buffer(const void* data, size_t size, std::unique_ptr<Model>* out) {
  return from_buffer(data, size, LoadOptions(), out);
}

Status Model::from_buffer(const void* data, size_t size, const LoadOptions& options,
                          std::unique_ptr<Model>* out) {
  if (data == nullptr || out == nullptr) {
    return Status::error(StatusCode::kInvalidArgument, "Model::from_buffer: null argument");
  }
  out->reset();
  if (reinterpret_cast<uintptr_t>(data) % kWeightAlignment != 0) {
    return Status::error(StatusCode::kInvalidArgument,
                         "Model::from_buffer: the buffer must be %llu-byte aligned",
                         static_cast<unsigned long long>(kWeightAlignment));
  }
  std::unique_ptr<Impl> impl;
  EDGEMT_RETURN_IF_ERROR(make_model(static_cast<const uint8_t*>(data), size, MappedFile(),
                                    CopiedFile(), options.verify_checksum, &impl));
  return adopt(std::move(impl), out);
}

uint32_t Model::format_version() const { return impl_->model.format_version; }
const FileChecksum& Model::checksum() const { return impl_->model.checksum; }
const char* Model::family() const { return family_name(impl_->model.family.id); }
uint32_t Model::vocab_size() const { return family_vocab_size(impl_->model.family); }
uint32_t Model::source_vocab_size() const {
  return family_source_vocab_size(impl_->model.family);
}
uint32_t Model::max_sequence_length() const {
  return family_max_sequence_length(impl_->model.family);
}
void Model::describe_config(char* out, size_t size) const {
  describe_family_config(impl_->model.family, out, size);
}
const FamilyConfig& family_config(const Model& model) { return model.impl_->model.family; }
const SpecialTokens& Model::special_tokens() const { return impl_->model.special_tokens; }
DType Model::weight_dtype() const { return impl_->model.weight_dtype; }
QuantizationScheme Model::quantization() const { return impl_->model.quantization; }
bool Model::f32_tables() const {
  return weight_dtype() == DType::kI8 && table_dtype() == DType::kF32;
}
DType Model::table_dtype() const {
  const VerifiedModel& m = impl_->model;  // weight_types says which files keep other tables
  return weight_types(m.weight_dtype, m.quantization, m.f32_tables, m.f16_tables).tables;
}
bool Model::residual_tables() const { return impl_->model.residual_tables; }
const char* Model::source_language() const { return impl_->model.source_language; }
const char* Model::target_language() const { return impl_->model.target_language; }
const Provenance& Model::provenance() const { return impl_->model.provenance; }

const uint8_t* Model::tokenizer_model(size_t* size) const {
  return tokenizer_model(TextSide::kSource, size);
}

const uint8_t* Model::tokenizer_model(TextSide side, size_t* size) const {
  const VerifiedTokenizer& tokenizer = impl_->model.tokenizers[static_cast<size_t>(side) & 1];
  if (size != nullptr) *size = tokenizer.model_size;
  return tokenizer.model;
}

size_t Model::vocabulary_size(TextSide side) const {
  return impl_->model.tokenizers[static_cast<size_t>(side) & 1].piece_count;
}

const char* Model::vocabulary_piece(TextSide side, size_t id, size_t* length) const {
  return edgemt::vocabulary_piece(impl_->model.tokenizers[static_cast<size_t>(side) & 1], id, length);
}

int32_t Model::unk_id(TextSide side) const {
  return impl_->model.tokenizers[static_cast<size_t>(side) & 1].unk;
}

int32_t Model::eos_id(TextSide side) const {
  return impl_->model.tokenizers[static_cast<size_t>(side) & 1].eos;
}

const DecodingDefaults& Model::decoding() const { return impl_->model.decoding; }
const LexicalShortlist* Model::shortlist() const {
  return impl_->model.has_shortlist ? &impl_->model.shortlist : nullptr;
}

bool Model::append_eos_to_source() const { return impl_->model.append_eos_to_source; }
uint64_t Model::file_size() const { return impl_->file_size; }
uint64_t Model::weights_size() const { return impl_->model.weights_size; }
size_t Model::tensor_count() const { return impl_->model.tensor_count; }

const TensorView& Model::tensor(size_t index) const {
  assert(index < impl_->model.tensor_count && "Model::tensor: index out of range");
  return impl_->model.tensors[index];
}

const TensorView* Model::find_tensor(const char* name) const {
  return find_tensor_view(impl_->model.tensors.get(), impl_->model.tensor_count, name);
}

void Model::release_tensor_pages(const TensorView& tensor) const {
  impl_->file.release_pages(tensor.data, tensor.size_bytes);
}

}  // namespace edgemt
