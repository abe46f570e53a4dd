"""The int and int-list arguments of PyTorch ops with one overload:
``{op: {argument: (index in the schema, keyword-only, kind)}}``, ``self`` at index 0.
Written by tools/gen_int_args.py from torch 2.13's schemas; do not edit."""

INT_ARGS = {
    "amax": {"dim": (1, False, "ints?")},
    "amin": {"dim": (1, False, "ints?")},
    "aminmax": {"dim": (1, True, "int?")},
    "argmax": {"dim": (1, False, "int?")},
    "argmin": {"dim": (1, False, "int?")},
    "as_strided": {
        "size": (1, False, "ints"),
        "storage_offset": (3, False, "int?"),
        "stride": (2, False, "ints"),
    },
    "as_strided_scatter": {
        "size": (2, False, "ints"),
        "storage_offset": (4, False, "int?"),
        "stride": (3, False, "ints"),
    },
    "bincount": {"minlength": (2, False, "int")},
    "broadcast_to": {"size": (1, False, "ints")},
    "cat": {"dim": (1, False, "int")},
    "chunk": {"chunks": (1, False, "int"), "dim": (2, False, "int")},
    "combinations": {"r": (1, False, "int")},
    "concat": {"dim": (1, False, "int")},
    "concatenate": {"dim": (1, False, "int")},
    "cosine_similarity": {"dim": (2, False, "int")},
    "cov": {"correction": (1, True, "int")},
    "cross": {"dim": (2, False, "int?")},
    "cummax": {"dim": (1, False, "int")},
    "cummin": {"dim": (1, False, "int")},
    "cumprod": {"dim": (1, False, "int")},
    "cumsum": {"dim": (1, False, "int")},
    "diag": {"diagonal": (1, False, "int")},
    "diag_embed": {
        "dim1": (2, False, "int"),
        "dim2": (3, False, "int"),
        "offset": (1, False, "int"),
    },
    "diagflat": {"offset": (1, False, "int")},
    "diagonal": {"dim1": (2, False, "int"), "dim2": (3, False, "int"), "offset": (1, False, "int")},
    "diagonal_scatter": {
        "dim1": (3, False, "int"),
        "dim2": (4, False, "int"),
        "offset": (2, False, "int"),
    },
    "diff": {"dim": (2, False, "int"), "n": (1, False, "int")},
    "expand": {"size": (1, False, "ints")},
    "flatten": {"end_dim": (2, False, "int"), "start_dim": (1, False, "int")},
    "flip": {"dims": (1, False, "ints")},
    "gather": {"dim": (1, False, "int")},
    "histc": {"bins": (1, False, "int")},
    "index_add": {"dim": (1, False, "int")},
    "index_copy": {"dim": (1, False, "int")},
    "index_reduce": {"dim": (1, False, "int")},
    "index_select": {"dim": (1, False, "int")},
    "kthvalue": {"dim": (2, False, "int"), "k": (1, False, "int")},
    "log_softmax": {"dim": (1, False, "int")},
    "logcumsumexp": {"dim": (1, False, "int")},
    "logsumexp": {"dim": (1, False, "ints")},
    "matrix_power": {"n": (1, False, "int")},
    "mode": {"dim": (1, False, "int")},
    "multinomial": {"num_samples": (1, False, "int")},
    "mvlgamma": {"p": (1, False, "int")},
    "nanmean": {"dim": (1, False, "ints?")},
    "nansum": {"dim": (1, False, "ints?")},
    "new_empty": {"size": (1, False, "ints")},
    "new_full": {"size": (1, False, "ints")},
    "new_ones": {"size": (1, False, "ints")},
    "new_zeros": {"size": (1, False, "ints")},
    "norm_except_dim": {"dim": (2, False, "int"), "pow": (1, False, "int")},
    "permute": {"dims": (1, False, "ints")},
    "renorm": {"dim": (2, False, "int")},
    "repeat": {"repeats": (1, False, "ints")},
    "reshape": {"shape": (1, False, "ints")},
    "roll": {"dims": (2, False, "ints?"), "shifts": (1, False, "ints")},
    "rot90": {"dims": (2, False, "ints?"), "k": (1, False, "int")},
    "scatter_add": {"dim": (1, False, "int")},
    "scatter_reduce": {"dim": (1, False, "int")},
    "select": {"dim": (1, False, "int"), "index": (2, False, "int")},
    "select_scatter": {"dim": (2, False, "int"), "index": (3, False, "int")},
    "slice_scatter": {
        "dim": (2, False, "int"),
        "end": (4, False, "int?"),
        "start": (3, False, "int?"),
        "step": (5, False, "int"),
    },
    "softmax": {"dim": (1, False, "int")},
    "split_with_sizes": {"dim": (2, False, "int"), "split_sizes": (1, False, "ints")},
    "stack": {"dim": (1, False, "int")},
    "sum_to_size": {"size": (1, False, "ints")},
    "swapaxes": {"axis0": (1, False, "int"), "axis1": (2, False, "int")},
    "swapdims": {"dim0": (1, False, "int"), "dim1": (2, False, "int")},
    "take_along_dim": {"dim": (2, False, "int?")},
    "tile": {"dims": (1, False, "ints")},
    "topk": {"dim": (2, False, "int"), "k": (1, False, "int")},
    "transpose": {"dim0": (1, False, "int"), "dim1": (2, False, "int")},
    "tril": {"diagonal": (1, False, "int")},
    "triu": {"diagonal": (1, False, "int")},
    "unbind": {"dim": (1, False, "int")},
    "unflatten": {"dim": (1, False, "int"), "sizes": (2, False, "ints")},
    "unfold": {
        "dimension": (1, False, "int"),
        "size": (2, False, "int"),
        "step": (3, False, "int"),
    },
    "unsqueeze": {"dim": (1, False, "int")},
    "vander": {"N": (1, False, "int?")},
}

# which of them are Tensor methods, which torch functions (most are both)
_BOTH = frozenset(
    {
        "amax",
        "amin",
        "aminmax",
        "argmax",
        "argmin",
        "as_strided",
        "as_strided_scatter",
        "bincount",
        "broadcast_to",
        "chunk",
        "cov",
        "cross",
        "cummax",
        "cummin",
        "cumprod",
        "cumsum",
        "diag",
        "diag_embed",
        "diagflat",
        "diagonal",
        "diagonal_scatter",
        "diff",
        "flatten",
        "flip",
        "gather",
        "histc",
        "index_add",
        "index_copy",
        "index_reduce",
        "index_select",
        "kthvalue",
        "log_softmax",
        "logcumsumexp",
        "logsumexp",
        "matrix_power",
        "mode",
        "multinomial",
        "mvlgamma",
        "nanmean",
        "nansum",
        "permute",
        "renorm",
        "reshape",
        "roll",
        "rot90",
        "scatter_add",
        "scatter_reduce",
        "select",
        "select_scatter",
        "slice_scatter",
        "softmax",
        "split_with_sizes",
        "swapaxes",
        "swapdims",
        "take_along_dim",
        "tile",
        "topk",
        "transpose",
        "tril",
        "triu",
        "unbind",
        "unsqueeze",
    }
)

METHODS = _BOTH | frozenset(
    {"expand", "new_empty", "new_full", "new_ones", "new_zeros", "repeat", "sum_to_size", "unfold"}
)

FUNCTIONS = _BOTH | frozenset(
    {
        "cat",
        "combinations",
        "concat",
        "concatenate",
        "cosine_similarity",
        "norm_except_dim",
        "stack",
        "unflatten",
        "vander",
    }
)

# methods whose one positional argument, an int list, may be spread out
VARARGS = frozenset(
    {
        "broadcast_to",
        "expand",
        "flip",
        "new_empty",
        "new_ones",
        "new_zeros",
        "permute",
        "repeat",
        "reshape",
        "sum_to_size",
        "tile",
    }
)

# overloaded ops: the signatures PyTorch's parser lists (method, function forms)
OVERLOADED_METHODS = {
    "all": (
        "()",
        "(tuple of ints dim = None, bool keepdim = False)",
        "(int dim, bool keepdim = False)",
    ),
    "any": (
        "()",
        "(tuple of ints dim = None, bool keepdim = False)",
        "(int dim, bool keepdim = False)",
    ),
    "argsort": (
        "(*, bool stable, int dim = -1, bool descending = False)",
        "(int dim = -1, bool descending = False)",
    ),
    "count_nonzero": ("(int dim = None)", "(tuple of ints dim)"),
    "max": ("()", "(Tensor other)", "(int dim, bool keepdim = False)"),
    "mean": (
        "(*, torch.dtype dtype = None)",
        "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)",
    ),
    "min": ("()", "(Tensor other)", "(int dim, bool keepdim = False)"),
    "moveaxis": (
        "(int source, int destination)",
        "(tuple of ints source, tuple of ints destination)",
    ),
    "movedim": (
        "(int source, int destination)",
        "(tuple of ints source, tuple of ints destination)",
    ),
    "narrow": ("(int dim, Tensor start, int length)", "(int dim, int start, int length)"),
    "prod": (
        "(*, torch.dtype dtype = None)",
        "(int dim, bool keepdim = False, *, torch.dtype dtype = None)",
    ),
    "sort": (
        "(*, bool stable, int dim = -1, bool descending = False)",
        "(int dim = -1, bool descending = False)",
    ),
    "squeeze": ("()", "(int dim)", "(tuple of ints dim)"),
    "std": (
        "(tuple of ints dim, bool unbiased = True, bool keepdim = False)",
        "(tuple of ints dim = None, *, Number correction = None, bool keepdim = False)",
        "(bool unbiased = True)",
    ),
    "sum": (
        "(*, torch.dtype dtype = None)",
        "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)",
    ),
    "var": (
        "(tuple of ints dim, bool unbiased = True, bool keepdim = False)",
        "(tuple of ints dim = None, *, Number correction = None, bool keepdim = False)",
        "(bool unbiased = True)",
    ),
}

OVERLOADED_FUNCTIONS = {
    "all": (
        "(Tensor input, *, Tensor out = None)",
        "(Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None)",
        "(Tensor input, int dim, bool keepdim = False, *, Tensor out = None)",
    ),
    "any": (
        "(Tensor input, *, Tensor out = None)",
        "(Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None)",
        "(Tensor input, int dim, bool keepdim = False, *, Tensor out = None)",
    ),
    "argsort": (
        "(Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)",
        "(Tensor input, int dim = -1, bool descending = False)",
    ),
    "count_nonzero": ("(Tensor input, int dim = None)", "(Tensor input, tuple of ints dim)"),
    "max": (
        "(Tensor input, *, Tensor out = None)",
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
    ),
    "mean": (
        "(Tensor input, *, torch.dtype dtype = None, Tensor out = None)",
        "(Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
        "Tensor out = None)",
    ),
    "min": (
        "(Tensor input, *, Tensor out = None)",
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
    ),
    "moveaxis": (
        "(Tensor input, int source, int destination)",
        "(Tensor input, tuple of ints source, tuple of ints destination)",
    ),
    "movedim": (
        "(Tensor input, int source, int destination)",
        "(Tensor input, tuple of ints source, tuple of ints destination)",
    ),
    "narrow": (
        "(Tensor input, int dim, Tensor start, int length)",
        "(Tensor input, int dim, int start, int length)",
    ),
    "prod": (
        "(Tensor input, *, torch.dtype dtype = None)",
        "(Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out "
        "= None)",
    ),
    "sort": (
        "(Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors "
        "out = None)",
        "(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)",
    ),
    "squeeze": ("(Tensor input)", "(Tensor input, int dim)", "(Tensor input, tuple of ints dim)"),
    "std": (
        "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor "
        "out = None)",
        "(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = "
        "False, Tensor out = None)",
        "(Tensor input, bool unbiased = True)",
    ),
    "sum": (
        "(Tensor input, *, torch.dtype dtype = None)",
        "(Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
        "Tensor out = None)",
    ),
    "var": (
        "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor "
        "out = None)",
        "(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = "
        "False, Tensor out = None)",
        "(Tensor input, bool unbiased = True)",
    ),
}

# the arguments of the overloaded ops that take None
NONE_OK = {
    "all": frozenset({"dim"}),
    "any": frozenset({"dim"}),
    "count_nonzero": frozenset({"dim"}),
    "mean": frozenset({"dim", "dtype"}),
    "nanmean": frozenset({"dim", "dtype"}),
    "nansum": frozenset({"dim", "dtype"}),
    "prod": frozenset({"dtype"}),
    "sort": frozenset({"stable"}),
    "std": frozenset({"correction", "dim"}),
    "sum": frozenset({"dim", "dtype"}),
    "var": frozenset({"correction", "dim"}),
}

# functions torch.nn.functional shares with torch (the same parser)
FUNCTIONAL_ALIASES = frozenset({"cosine_similarity"})
