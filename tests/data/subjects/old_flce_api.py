"""A test subject shaped like an older Liger-Kernel release: 0.6.2's functional API.

liger_fused_linear_cross_entropy(input, weight, target, bias=None, ce_weight=None,
ignore_index=-100, lse_square_scale=0.0, label_smoothing=0.0, reduction="mean", softcap=None,
return_z_loss=False, accum_dtype=None) -- no use_token_scaling, return_token_accuracy or
return_predicted_tokens -- returning the loss, or (loss, z_loss) with return_z_loss. The
arithmetic is flce's own `model` (flce_subjects.model), so every case it can take passes.

    flce run CASE --subject old_flce_api:liger_fused_linear_cross_entropy --subject-path tests/data/subjects
"""
from flce_subjects import model

__version__ = "0.6.2-shaped"


def liger_fused_linear_cross_entropy(input, weight, target, bias=None, ce_weight=None, ignore_index=-100,
                                     lse_square_scale=0.0, label_smoothing=0.0, reduction="mean", softcap=None,
                                     return_z_loss=False, accum_dtype=None):
    loss, z_loss, _, _ = model.flce(input, weight, target, bias=bias, ce_weight=ce_weight, ignore_index=ignore_index,
                                    lse_square_scale=lse_square_scale, label_smoothing=label_smoothing,
                                    reduction=reduction, softcap=softcap, return_z_loss=return_z_loss,
                                    accum_dtype=accum_dtype)
    if not return_z_loss:
        return loss
    return loss, z_loss
