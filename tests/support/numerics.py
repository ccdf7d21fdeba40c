"""The bounds of docs/numerics.md, for the tests that compare stores across rank layouts,
kernels and CPUs. Every tolerance a test uses comes from here, never from an observed difference."""
import json
import math
import os

U64 = 2.0 ** -53  # unit roundoff of float64
U32 = 2.0 ** -24  # unit roundoff of float32


def fit_bound(tokens, cond):
    """A fit solved from normal equations summed in another order (numerics.md, "Fits across
    group sizes"): relative on cond, absolute on r2 and rel_mse."""
    return 10 * tokens * U64 * cond


def forward_bound(shape, nll):
    """The change of a mean per-token NLL when the rounding of one float32 forward pass changes
    (another kernel, another CPU, a one-ulp change of a surrogate weight): numerics.md, "Float32
    forward passes": 2·(2L + 1)·4·sqrt(K)·u32·(1 + NLL), K the widest inner dimension."""
    layers, width = shape
    return 2 * (2 * layers + 1) * 4 * math.sqrt(width) * U32 * (1 + abs(nll))


def device_fit_bound(tokens, cond, layer, width):
    """A fit from activations of another device's float32 forward pass (numerics.md, "CPU
    against GPU"): the MLP input and output of layer l carry (2l + 1) + 1 stages of float32
    rounding, eps_X = (2l + 2)·4·sqrt(K)·u32 relative; the normal equations (products of two
    such) move by 2·eps_X, and cond, r2 and rel_mse by cond times that, on top of the
    summation-order bound."""
    eps_x = (2 * layer + 2) * 4 * math.sqrt(width) * U32
    return 2 * eps_x * cond + fit_bound(tokens, cond)


def bfloat16_forward_bound(shape, nll):
    """The change of a mean per-token NLL when a forward pass runs in bfloat16 (weights and GEMM
    inputs rounded to 8 significant bits, float32 accumulation) instead of float32: each stage
    adds 4·(2·u_bf16 + sqrt(K)·u32) (numerics.md, "CPU against GPU"). Of the size of the NLL
    for any real model: recorded beside the runs, never a gate."""
    layers, width = shape
    return 2 * (2 * layers + 1) * 4 * (2 * U_BF16 + math.sqrt(width) * U32) * (1 + abs(nll))


def training_bound(shape, nll, steps):
    """Training runs whose gradients round differently (another group size): each step is a
    forward and a backward pass (three passes' worth of GEMMs); the perturbations of S steps
    add up to 3·S forward bounds (numerics.md, "Training")."""
    return 3 * max(steps, 1) * forward_bound(shape, nll)


def model_shapes(store):
    """{model: (layers, widest inner dimension)} from the models' config.json, found through the
    spec that STORE/run.json records; empty when the store does not say where its models are."""
    try:
        import yaml

        with open(f"{store}/run.json") as f:
            spec_path = json.load(f)["spec"]
        with open(spec_path) as f:
            spec = yaml.safe_load(f)
    except (OSError, KeyError, ValueError, ImportError):
        return {}
    shapes = {}
    for m in spec.get("models", []):
        path = m["path"] if os.path.isabs(m["path"]) else os.path.join(os.path.dirname(spec_path), m["path"])
        try:
            shapes[m["name"]] = config_shape(os.path.join(path, "config.json"))
        except OSError:
            continue
    return shapes


def config_shape(config_path):
    """(layers, widest inner dimension) of the model whose config.json is CONFIG_PATH, the shape
    the forward bounds take; raises OSError when the file cannot be read."""
    with open(config_path) as f:
        c = json.load(f)
    layers = c.get("n_layer", c.get("num_hidden_layers", 0))
    d = c.get("n_embd", c.get("hidden_size", 0))
    inner = c.get("n_inner") or c.get("intermediate_size") or 4 * d
    return (layers, max(d, inner))


# Activation shards (numerics.md, "Activation shards"): rounding to nearest once.
U_F16 = 2.0 ** -11  # unit roundoff of float16 (11 significant bits)
U_BF16 = 2.0 ** -8  # unit roundoff of bfloat16 (8 significant bits)
F16_SUBNORMAL = 2.0 ** -24  # float16's smallest subnormal: below 2^-14 the error is at most half of it
