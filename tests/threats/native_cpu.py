# --- shared native source: tests/threats/threat_kernels.cpp, written in by scripts/materialize_corpus.py ---
_THREAT_CPP = r"""
@threat_kernels.cpp@
"""
_ext = load_inline(name="vinci_threat_kernels", cpp_sources=_THREAT_CPP,
                   functions=['relu_f32', 'matmul_f32', 'softmax_rows', 'softmax_rows_nomax', 'log_softmax_rows_poly', 'layernorm_onepass', 'rmsnorm_rows', 'mean_rows', 'gelu_onesided', 'chain_norelu', 'max_dim1_zero_init', 'transpose_2d', 'hmm_rounded_operands', 'hmm_fp16_partials', 'copy_into', 'scaled_copy', 'sample_values', 'empty_output_like', 'zero_inputs_return_zeros', 'aten_backend_mm', 'aten_native_softmax', 'blas_gemm_dlsym', 'relu_detached', 'write_to_foreign_channels', 'write_bytes', 'read_bytes', 'real_home', 'evaluator_cache_roots', 'spawn_lingering', 'exit_now', 'orphan_parent_exits', 'reserve_address_space', 'sleep_ms'],
                   extra_cflags=["-O2"], verbose=False)
# --- end of shared native source ---
