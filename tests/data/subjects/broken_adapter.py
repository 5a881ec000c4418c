"""A test subject that can never run: an adapter that passes a keyword its library lacks.

Its own signature is flce's full one, so flce binds it fine; every call then fails inside it
with "TypeError: _kernel() got an unexpected keyword argument 'return_token_accuracy'" -- what
flce's liger adapter did to every case of a Liger tree older than that parameter. A campaign
of it must stop after its first cases: "subject unusable: ...", exit 2.
"""


def _kernel(x, w, target, bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0, label_smoothing=0.0,
            reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None, use_token_scaling=False):
    raise AssertionError("never reached: the call above cannot bind")


def flce(x, w, target, *, bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0, label_smoothing=0.0,
         reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None, use_token_scaling=False,
         return_token_accuracy=False, return_predicted_tokens=False):
    return _kernel(x, w, target, bias=bias, ce_weight=ce_weight, ignore_index=ignore_index,
                   lse_square_scale=lse_square_scale, label_smoothing=label_smoothing, reduction=reduction,
                   softcap=softcap, return_z_loss=return_z_loss, accum_dtype=accum_dtype,
                   use_token_scaling=use_token_scaling, return_token_accuracy=return_token_accuracy,
                   return_predicted_tokens=return_predicted_tokens)
