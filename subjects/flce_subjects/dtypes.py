"""Case-JSON dtype names <-> torch dtypes (one table, used everywhere)."""
import torch

BY_NAME = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "fp64": torch.float64}


def of(name):
    """'fp32'/'fp16'/'bf16' -> torch.dtype; 'none'/None -> None."""
    if name is None or name == "none":
        return None
    return BY_NAME[name]


def accum(case):
    return of(case.get("accum_dtype", "none"))


def op_out_dtype(case):
    """Op kinds produce accum_dtype when given, else the input dtype (mirrors Case::op_out_dtype)."""
    return accum(case) or of(case["input_dtype"])
