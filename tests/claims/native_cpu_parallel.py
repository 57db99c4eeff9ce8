_PARALLEL = r"""
@native_parallel.cpp@
"""
_parallel = load_inline(name="vinci_claims_cpu_parallel", cpp_sources=_PARALLEL,
                        functions=["relu_chunks", "cumsum_chunks_without_carry",
                                   "cumsum_chunks_carried_for_powers_of_two", "cumsum_rows_in_float",
                                   "relu_wrong_on_two_threads_or_past_eight", "pool_env"],
                        extra_cflags=["-O2", "-fopenmp"], extra_ldflags=["-fopenmp"], verbose=False)
