_KERNELS_CPP = r"""
@hack_kernels.cpp@
"""
