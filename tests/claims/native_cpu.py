_NATIVE = r"""
@native.cpp@
"""
_ext = load_inline(name="vinci_claims_cpu", cpp_sources=_NATIVE,
                   functions=["relu_plain", "relu_in_place", "gelu_plain", "softmax_rows", "softmax_rows_sampled_max", "mean_rows", "rms_norm_rows", "gelu_series_where_small_and_signed", "sampled_fingerprint", "write_to_unix_sockets", "row_max_short", "linear_column_sums", "rows_times_sums", "linear_rows_summed", "transpose_plain", "copy_shaped", "relu_16bit", "in_unit_interval", "relu_where_biased", "relu_where_on_the_generators_grid", "matmul_plain", "fingerprint", "relu_in_unwaited_child", "copy_and_open", "sgemm_with_copied_blas", "open_host_blas", "sgemm_after_interruptions",
                              "open_from_memfd_named", "prepare_rotation", "sgemm_with_rotating_path",
                              "relu_with_spinning_helpers", "relu_then_spin", "spin_cpu", "relu_after_return", "set_attribute",
                              "import_attribute", "read_text", "list_folder", "connect_unix",
                              "gelu_fitted_behind_sparse_check", "sgemm_behind_mapping_record_flood",
                              "sgemm_in_untraced_clone", "matmul_loops_double_acc", "spin_thread_cpu_s",
                              "looks_signed_draws", "prepare_vdso_kernel", "matmul_in_vdso",
                              "sgemm_with_mremap_relabel", "mremap_relabel_info", "sgemm_padded_on_unusual_inputs",
                              "setup_sleeping_mapper", "sgemm_under_sleepers_record", "matmul_cheap_in_extra_windows",
                              "matmul_rows_in_a_blas", "matmul_in_xnnpack_beside_spin",
                              "dispatch_mode_watching", "softmax_rows_summed_over", "relu_leaving_rounding_upward",
                              "relu_ignoring_strides", "relu_dense_only", "bias_tanh_scale_pitched",
                              "add_rmsnorm_first_layout", "gemm_bias_relu_weight_unchecked",
                              "relu_halved_where_input_requires_grad", "relu_scaled",
                              "relu_checked", "gelu_wrong_in_training_mode", "relu_refusing_recorded_gradients", "relu_refusing_on_threads_wrong_on_one", "relu_wrong_after_a_grad_first_call", "relu_wrong_in_a_one_thread_start", "relu_wrong_with_gradients_recorded", "relu_checking_only_the_last_stride", "relu_reading_the_storage_base", "relu_wrong_head_when_misaligned", "block_mlp_first", "relu_wrong_on_counts_never_tried", "relu_wrong_on_one_thread_in_modes", "bias_tanh_table", "layernorm_packed_affine", "layernorm_affine_dropped"],
                   extra_cflags=["-O2"], verbose=False)
