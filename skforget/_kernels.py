# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Pick the fastest build of the gradient kernel this CPU can run."""

from skforget import _gd_fast

kernel = _gd_fast
if _gd_fast.cpu_has_avx2_fma():
    try:
        from skforget import _gd_fast_avx2 as kernel
    except ImportError:  # built without the x86-64-v3 variant
        kernel = _gd_fast

LOGISTIC = kernel.LOGISTIC
SQUARED = kernel.SQUARED
MULTINOMIAL = kernel.MULTINOMIAL
OVR = kernel.OVR
clipped_gradient_dense = kernel.clipped_gradient_dense
clipped_gradient_csr = kernel.clipped_gradient_csr
run_steps_dense = kernel.run_steps_dense
run_steps_csr = kernel.run_steps_csr
row_norms_dense = kernel.row_norms_dense
row_norms_csr = kernel.row_norms_csr
csr_structure_error = kernel.csr_structure_error
