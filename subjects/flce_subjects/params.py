"""Which FLCE parameters a subject's callable takes, and how a case's options reach it.

The runner hands every subject the optional parameters of Liger's functional API (PARAMS).
A subject written against another version of an API takes fewer: Liger-Kernel's
liger_fused_linear_cross_entropy gained ce_weight and return_z_loss in 0.5.x, accum_dtype
in 0.6.2, use_token_scaling and return_token_accuracy in 0.6.4, return_predicted_tokens in
0.8.0, and before 0.5.0 it was an autograd Function's apply (positional only; its names are
those of the Function's forward). Passing every keyword made each case of an older tree
fail with "got an unexpected keyword argument".

A Plan reads the real callable's signature (inspect.signature) once, outside any traced
region, and then:
  * missing(options): the parameters the case uses (a value other than NEUTRAL) that the
    callable does not take -- the runner reports those cases "unsupported" with the names;
  * bind(options): the arguments after (x, w, target), only those the case uses, under the
    names the callable has (ALIASES); a parameter whose case value is neutral is left out
    unless the callable's own default differs from the neutral value (then it is passed).
A callable that cannot take flce's call at all (fewer than three positional parameters, a
required parameter flce has no value for) raises SignatureMismatch (a TypeError). So does one
that shows no sign of being an FLCE function: x, w, target reach it only through *args and it
takes none of PARAMS, by name or through **kwargs (os.path.join(a, *p) would otherwise be
called with tensors, and its TypeError reported as a finding about the subject).
"""
import inspect

PARAMS = ("bias", "ce_weight", "ignore_index", "lse_square_scale", "label_smoothing", "reduction", "softcap",
          "return_z_loss", "accum_dtype", "use_token_scaling", "return_token_accuracy", "return_predicted_tokens")
NEUTRAL = dict(bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0, label_smoothing=0.0,
               reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None, use_token_scaling=False,
               return_token_accuracy=False, return_predicted_tokens=False)
# Other names a callable may give one of PARAMS (the first three positional parameters are
# always x, w, target, whatever their names). Liger-Kernel's functional API kept its keyword
# names from its first keyword release (0.5.0) to 0.8.x (checked tag by tag); these are
# torch.nn.functional.linear_cross_entropy's (linear_bias; weight = the class weights).
ALIASES = {"bias": ("linear_bias",), "ce_weight": ("weight",)}

_EMPTY = inspect.Parameter.empty
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class SignatureMismatch(TypeError):
    """The subject's callable cannot be called the way flce calls an FLCE function."""


def is_neutral(param, value):
    neutral = NEUTRAL[param]
    if neutral is None:
        return value is None
    if value is None or isinstance(value, bool) != isinstance(neutral, bool):
        return False
    try:
        return bool(value == neutral)
    except Exception:  # a tensor or an odd object: certainly not the neutral scalar
        return False


def used(options):
    """The parameters whose value in `options` (PARAMS -> value) is not neutral, in PARAMS order."""
    return [p for p in PARAMS if not is_neutral(p, options.get(p, NEUTRAL[p]))]


def _canonical(name):
    if name in NEUTRAL:
        return name
    for param, others in ALIASES.items():
        if name in others:
            return param
    return None


def _describe(fn):
    mod = getattr(fn, "__module__", None) or ""
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{mod}.{qual}" if mod else qual


def _autograd_function(fn):
    """The torch.autograd.Function whose apply `fn` is, or None."""
    owner = getattr(fn, "__self__", None)
    if not inspect.isclass(owner) or getattr(fn, "__name__", "") != "apply":
        return None
    try:
        import torch
    except ImportError:
        return None
    return owner if issubclass(owner, torch.autograd.Function) else None


def _parameters(fn):
    """fn's parameters as a list, or None when its signature cannot be read."""
    function = _autograd_function(fn)
    if function is not None:  # apply(*args): the names are forward's, after ctx; positional only
        params = list(inspect.signature(function.forward).parameters.values())[1:]
        return [p.replace(kind=inspect.Parameter.POSITIONAL_ONLY) for p in params]
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a text signature
        return None


def _same(default, neutral):
    if default is _EMPTY:
        return False
    if neutral is None:
        return default is None
    try:
        return isinstance(default, bool) == isinstance(neutral, bool) and bool(default == neutral)
    except Exception:
        return False


class Plan:
    """How to call one subject callable; see the module docstring."""

    def __init__(self, fn):
        self.where = _describe(fn)
        self.keyword = {}       # param -> (the callable's name for it, its default)
        self.positional = []    # positional-only parameters after target: (param or None, default)
        self.any_keyword = False  # **kwargs: takes every keyword it is given
        self.known = True        # False: the signature could not be read (every parameter assumed)
        params = _parameters(fn)
        if params is None:
            self.known = False
            self.any_keyword = True
            return
        slots, named, rest = 0, 0, []
        for p in params:
            if slots < 3 and p.kind in _POSITIONAL:
                slots += 1
                named += 1
            elif slots < 3 and p.kind == inspect.Parameter.VAR_POSITIONAL:
                slots = 3
            else:
                rest.append(p)
        if slots < 3:
            raise SignatureMismatch(f"{self.where} takes {slots} positional parameter(s); an FLCE subject is called "
                                    "as flce(x, w, target, ...)")
        for p in rest:
            if p.kind == inspect.Parameter.VAR_KEYWORD:
                self.any_keyword = True
                continue
            if p.kind == inspect.Parameter.VAR_POSITIONAL:
                continue
            param = _canonical(p.name)
            if param is not None and (param in self.keyword or any(q == param for q, _ in self.positional)):
                param = None  # a second name for one parameter (an alias next to the name itself)
            if param is None:
                if p.default is _EMPTY:
                    raise SignatureMismatch(f"{self.where}: required parameter {p.name!r} is not one flce passes "
                                            f"(it passes x, w, target and {', '.join(PARAMS)})")
                if p.kind == inspect.Parameter.POSITIONAL_ONLY:
                    self.positional.append((None, p.default))
                continue
            if p.kind == inspect.Parameter.POSITIONAL_ONLY:
                self.positional.append((param, p.default))
            else:
                self.keyword[param] = (p.name, p.default)
        if named < 3 and not self.any_keyword and not self.keyword and \
                not any(q is not None for q, _ in self.positional):
            signature = f"({', '.join(str(p) for p in params)})"
            raise SignatureMismatch(f"{self.where}{signature} is not an FLCE function: it takes x, w, target only "
                                    f"through *{params[named].name} and none of flce's parameters "
                                    f"({', '.join(PARAMS)}) by name or **kwargs")

    def accepts(self, param):
        return self.any_keyword or param in self.keyword or any(q == param for q, _ in self.positional)

    def params(self):
        """The parameters the callable takes, in PARAMS order."""
        return [p for p in PARAMS if self.accepts(p)]

    def missing(self, options):
        """The parameters `options` uses that the callable does not take, in PARAMS order."""
        return [p for p in used(options) if not self.accepts(p)]

    def bind(self, options):
        """(args, kwargs) to call the callable with after x, w, target. Assumes missing() is empty."""
        def value(param):
            return options.get(param, NEUTRAL[param])

        def needed(param, default):
            return not is_neutral(param, value(param)) or not _same(default, NEUTRAL[param])

        kwargs = {}
        for param in PARAMS:
            if param in self.keyword:
                name, default = self.keyword[param]
                if needed(param, default):
                    kwargs[name] = value(param)
            elif self.any_keyword and not is_neutral(param, value(param)) and \
                    not any(q == param for q, _ in self.positional):
                kwargs[param] = value(param)
        last = max((i for i, (param, default) in enumerate(self.positional)
                    if param is not None and needed(param, default)), default=-1)
        args = [value(param) if param is not None else default for param, default in self.positional[:last + 1]]
        return args, kwargs


def plan_for(fn):
    return Plan(fn)


def capabilities(fn):
    """What the subject host's `capabilities` request answers for an flce callable."""
    plan = Plan(fn)
    takes = plan.params()
    return {"params": takes, "lacks": [p for p in PARAMS if p not in takes], "callable": plan.where,
            "signature_known": plan.known}
