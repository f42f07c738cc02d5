"""Verify-attention workloads and kernels. Importing this package does not import torch."""

from kernels.registry import KERNELS, KernelInfo, UnknownKernel, get_kernel
from kernels.spec import VerifyWorkload, WorkloadError, parse_ctx_len

__all__ = ["VerifyWorkload", "WorkloadError", "parse_ctx_len", "KERNELS", "KernelInfo", "UnknownKernel", "get_kernel"]
