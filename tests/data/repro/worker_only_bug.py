"""A planted bug that shows only inside flce's subject hosts (FLCE_STACKS_FILE is set there):
the loss is scaled by 1.5. Its reproducer, run alone, passes: what `flce repro --check` exists
to catch (tests/repro.cmake, part check_alone)."""
import os

import torch


def flce(x, w, target, bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0, label_smoothing=0.0,
         reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None, use_token_scaling=False,
         return_token_accuracy=False, return_predicted_tokens=False):
    logits = (x @ w.t()).float()
    loss = torch.nn.functional.cross_entropy(logits, target, ignore_index=ignore_index, reduction=reduction,
                                             label_smoothing=label_smoothing)
    if os.environ.get("FLCE_STACKS_FILE"):
        loss = loss * 1.5
    return loss
