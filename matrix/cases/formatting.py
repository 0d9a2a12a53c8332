"""Formatting of static values: FORMAT_VALUE (<=3.12) versus FORMAT_SIMPLE /
FORMAT_WITH_SPEC / CONVERT_VALUE (3.13), BUILD_STRING, `%` and str.format."""
from matrix.cases import case
from matrix.cases.inputs import arr, args


@case("formatting", args(arr(3, 2)))
def fstring_of_shape(x):
    label = f"shape={x.shape} ndim={x.ndim}"
    return x * 2.0, label


@case("formatting", args(arr(3)))
def fstring_spec_and_conversion(x):
    ratio = 2.0 / 3.0
    name = "scale"
    label = f"{name!r}:{ratio:.3f}|{x.shape[0]:>4}"
    return x * ratio, label


@case("formatting", args(arr(3)))
def percent_formatting(x):
    return x + 1.0, "%s has %d items (%.1f)" % ("x", x.shape[0], 1.5)


@case("formatting", args(arr(3)))
def str_format_method(x):
    return x - 1.0, "{}-{:03d}".format(x.dtype, x.size)
