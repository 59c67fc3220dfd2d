/* The model file linked into the executable, read-only and 64-byte aligned
 * (EDGEMT_MODEL_ALIGNMENT: edgemt_model_open_memory() uses it in place).
 * The build passes the file's path as EDGEMT_MODEL_BLOB_PATH (a quoted
 * string). GNU as syntax that x86-64 and aarch64 both accept. */
  .section .rodata.edgemt_model_blob, "a", %progbits
  .balign 64
  .global example_model_blob
  .type example_model_blob, %object
example_model_blob:
  .incbin EDGEMT_MODEL_BLOB_PATH
  .global example_model_blob_end
example_model_blob_end:
  .size example_model_blob, . - example_model_blob

/* No executable stack for the program because of this file. */
  .section .note.GNU-stack, "", %progbits
