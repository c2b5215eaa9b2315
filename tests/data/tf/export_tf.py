"""Builds real Keras / tf.function / TF1 architectures with seeded random weights, freezes each to
a GraphDef (.pb) the way users do, and stores TensorFlow's own outputs for seeded inputs (.npz)
beside it; tests/test_tf_real.py converts the .pb files with mace and compares with them.

Run with TensorFlow installed (README.md here gives the version):
    python tests/data/tf/export_tf.py [OUT_DIR [MODEL ...]]
Nothing is downloaded (weights=None everywhere).
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

import keras
from keras import layers

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def _randomize(model, seed):
    """Keras leaves biases, BN offsets and moving statistics at 0/1; give every 1-D weight
    seeded random values so BatchNormalization (inference mode) and biases do real work."""
    rng = np.random.default_rng(seed)
    for v in model.weights:
        if len(v.shape) != 1:
            continue
        name = v.path if hasattr(v, "path") else v.name
        if "variance" in name or "gamma" in name:
            v.assign(rng.uniform(0.5, 1.5, v.shape).astype(np.float32))
        else:
            v.assign(rng.uniform(-0.3, 0.3, v.shape).astype(np.float32))


def _calibrate_bn(model, x, seed):
    """Random weights kill the signal through dozens of BatchNormalization layers left at
    mean 0 / variance 1 (the logits no longer depend on the input). Each BN's moving mean and
    variance are set, in order, to the statistics of its input on a calibration batch x, its
    gamma/beta to seeded random values: every layer then carries a signal of scale ~1."""
    rng = np.random.default_rng(seed)
    bns = [l for l in model.layers if isinstance(l, layers.BatchNormalization)]
    if not bns:
        return
    probe = keras.Model(model.inputs, [l.input for l in bns])
    for k, bn in enumerate(bns):
        h = np.asarray(probe(x, training=False)[k] if len(bns) > 1 else probe(x, training=False))
        axes = tuple(i for i in range(h.ndim) if i != h.ndim - 1)
        c = h.shape[-1]
        bn.set_weights([rng.uniform(0.5, 1.5, c).astype(np.float32),
                        rng.uniform(-0.3, 0.3, c).astype(np.float32),
                        h.mean(axes).astype(np.float32),
                        (h.var(axes) + rng.uniform(0, 0.1, c)).astype(np.float32)])


def _freeze_keras(model, specs, lower_control_flow=True):
    """tf.function -> concrete function -> convert_variables_to_constants_v2 -> GraphDef."""
    fn = tf.function(lambda *xs: model(list(xs) if len(xs) > 1 else xs[0], training=False))
    cf = fn.get_concrete_function(*specs)
    frozen = convert_variables_to_constants_v2(cf, lower_control_flow=lower_control_flow)
    gd = frozen.graph.as_graph_def()
    return gd, frozen, [t.name for t in frozen.inputs], [t.name for t in frozen.outputs]


def _save(name, gd, run, in_names, out_names, samples, note):
    """Writes NAME.pb and NAME.npz (x{k}_{i}: input i of sample k, y{k}_{j}: TF's output j)."""
    with open(os.path.join(OUT, name + ".pb"), "wb") as f:
        f.write(gd.SerializeToString())
    arrays = {}
    for k, xs in enumerate(samples):
        ys = run(*xs)
        for i, x in enumerate(xs):
            arrays[f"x{k}_{i}"] = x
        for j, y in enumerate(ys):
            arrays[f"y{k}_{j}"] = np.asarray(y)
    np.savez_compressed(os.path.join(OUT, name + ".npz"), **arrays)
    ops = sorted({n.op for n in gd.node})
    MANIFEST[name] = {"inputs": in_names, "outputs": out_names, "samples": len(samples),
                      "note": note, "ops": ops}
    print(f"{name}: {len(gd.node)} nodes, ops {ops}")


MANIFEST: dict = {}


def _keras(name, model, input_specs, samples, note, lower_control_flow=True, calib=None):
    _randomize(model, 1)
    if calib is not None:
        _calibrate_bn(model, calib, 2)
    gd, frozen, ins, outs = _freeze_keras(model, input_specs, lower_control_flow)

    def run(*xs):
        ys = frozen(*[tf.constant(x) for x in xs])
        return [y.numpy() for y in (ys if isinstance(ys, (list, tuple)) else [ys])]
    _save(name, gd, run, ins, outs, samples, note)


def _img(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


# --- architectures ----------------------------------------------------------------------------

def mobilenet_v2():
    m = keras.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None,
                                       classes=10, classifier_activation=None)
    rng = np.random.default_rng(10)
    _keras("mobilenet_v2", m, [tf.TensorSpec([None, 96, 96, 3], tf.float32, name="input")],
           [[_img(rng, 1, 96, 96, 3)], [_img(rng, 3, 96, 96, 3)]],
           "keras.applications.MobileNetV2(alpha=0.35, 96x96, classes=10, logits)",
           calib=_img(rng, 8, 96, 96, 3))


def _res_block(x, filters, stride):
    sc = x
    y = layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
    y = layers.BatchNormalization()(y)
    y = layers.ReLU()(y)
    y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
    y = layers.BatchNormalization()(y)
    if stride != 1 or x.shape[-1] != filters:
        sc = layers.Conv2D(filters, 1, strides=stride, use_bias=False)(x)
        sc = layers.BatchNormalization()(sc)
    return layers.Activation("relu")(layers.Add()([y, sc]))


def small_resnet():
    """ResNet stem as keras.applications.ResNet50 writes it (ZeroPadding2D, 7x7/2 conv, BN,
    ZeroPadding2D, 3x3/2 max pool) and basic residual blocks; dynamic batch, height, width."""
    inp = keras.Input((None, None, 3))
    x = layers.ZeroPadding2D(3)(inp)
    x = layers.Conv2D(16, 7, strides=2)(x)
    x = layers.BatchNormalization(epsilon=1.001e-5)(x)
    x = layers.Activation("relu")(x)
    x = layers.ZeroPadding2D(1)(x)
    x = layers.MaxPooling2D(3, strides=2)(x)
    for f, s in ((16, 1), (32, 2), (64, 2)):
        x = _res_block(x, f, s)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(10)(x)
    rng = np.random.default_rng(11)
    _keras("small_resnet", keras.Model(inp, x),
           [tf.TensorSpec([None, None, None, 3], tf.float32, name="input")],
           [[_img(rng, 1, 64, 64, 3)], [_img(rng, 2, 48, 80, 3)]],
           "ResNet50-style stem + 3 basic blocks, dynamic NHW", calib=_img(rng, 8, 64, 64, 3))


def _mbconv(x, filters, expand, stride, k):
    cin = x.shape[-1]
    y = x
    if expand != 1:
        y = layers.Conv2D(cin * expand, 1, padding="same", use_bias=False)(y)
        y = layers.BatchNormalization()(y)
        y = layers.Activation("swish")(y)
    y = layers.DepthwiseConv2D(k, strides=stride, padding="same", use_bias=False)(y)
    y = layers.BatchNormalization()(y)
    y = layers.Activation("swish")(y)
    se = layers.GlobalAveragePooling2D(keepdims=True)(y)
    se = layers.Conv2D(max(1, cin // 4), 1, activation="swish")(se)
    se = layers.Conv2D(y.shape[-1], 1, activation="sigmoid")(se)
    y = layers.Multiply()([y, se])
    y = layers.Conv2D(filters, 1, padding="same", use_bias=False)(y)
    y = layers.BatchNormalization()(y)
    if stride == 1 and cin == filters:
        y = layers.Dropout(0.2)(y)
        y = layers.Add()([y, x])
    return y


def efficientnet_small():
    """EfficientNet-B0's building blocks at small width: Rescaling + Normalization input
    layers, MBConv (expand 1x1, depthwise kxk, squeeze-excite, project) with swish, Dropout."""
    inp = keras.Input((64, 64, 3))
    x = layers.Rescaling(1.0 / 255.0)(inp)
    norm = layers.Normalization(axis=-1, mean=[0.485, 0.456, 0.406],
                                variance=[0.052, 0.050, 0.051])
    x = norm(x)
    x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("swish")(x)
    for f, e, s, k in ((16, 1, 1, 3), (24, 4, 2, 3), (24, 4, 1, 3), (40, 4, 2, 5)):
        x = _mbconv(x, f, e, s, k)
    x = layers.Conv2D(64, 1, use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("swish")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.2)(x)
    x = layers.Dense(10)(x)
    rng = np.random.default_rng(12)
    m = keras.Model(inp, x)
    _keras("efficientnet_small", m, [tf.TensorSpec([None, 64, 64, 3], tf.float32, name="input")],
           [[rng.uniform(0, 255, (1, 64, 64, 3)).astype(np.float32)],
            [rng.uniform(0, 255, (2, 64, 64, 3)).astype(np.float32)]],
           "EfficientNet-B0 blocks (MBConv + SE + swish), Rescaling/Normalization input",
           calib=rng.uniform(0, 255, (8, 64, 64, 3)).astype(np.float32))


def conv1d_kws():
    """A keyword spotter over MFCC frames: Conv1D (strided, dilated, separable), BN, ReLU,
    MaxPooling1D, AveragePooling1D, GlobalAveragePooling1D, Dense; two outputs (logits and their
    softmax)."""
    inp = keras.Input((49, 10))
    x = layers.Conv1D(32, 5, strides=2, padding="same")(inp)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    x = layers.Conv1D(32, 3, dilation_rate=2, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    x = layers.MaxPooling1D(2)(x)
    x = layers.SeparableConv1D(48, 3, padding="same", activation="relu")(x)
    x = layers.AveragePooling1D(2, padding="same")(x)
    x = layers.Conv1D(48, 3, padding="valid", activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    logits = layers.Dense(12)(x)
    probs = layers.Softmax()(logits)
    rng = np.random.default_rng(13)
    _keras("conv1d_kws", keras.Model(inp, [logits, probs]),
           [tf.TensorSpec([None, 49, 10], tf.float32, name="mfcc")],
           [[_img(rng, 1, 49, 10)], [_img(rng, 4, 49, 10)]],
           "Conv1D keyword spotter on 49x10 MFCC frames", calib=_img(rng, 8, 49, 10))


def _text_rnn(kind, unroll):
    inp = keras.Input((20,), dtype="int32")
    # Unit-variance embeddings (Keras's default is uniform +-0.05, which leaves the recurrent
    # state almost independent of the tokens).
    x = layers.Embedding(200, 16, embeddings_initializer=keras.initializers.RandomNormal(
        stddev=1.0))(inp)
    rnn = layers.LSTM if kind == "lstm" else layers.GRU
    x = rnn(24, unroll=unroll)(x)
    x = layers.Dense(4)(x)
    m = keras.Model(inp, x)
    rng = np.random.default_rng(14)
    ids = [rng.integers(0, 200, (1, 20)).astype(np.int32),
           rng.integers(0, 200, (3, 20)).astype(np.int32)]
    name = f"{kind}_text_" + ("unrolled" if unroll else "while")
    _keras(name, m, [tf.TensorSpec([None, 20], tf.int32, name="tokens")], [[i] for i in ids],
           f"Embedding(200,16) + {rnn.__name__}(24, unroll={unroll}) + Dense(4)")


def transformer_block():
    """One encoder block: token + position Embedding, MultiHeadAttention, residual Add,
    LayerNormalization, GELU feed-forward, GlobalAveragePooling1D, Dense; dynamic batch and
    sequence length."""
    inp = keras.Input((None,), dtype="int32")
    tok = layers.Embedding(100, 32)(inp)
    ops = keras.ops
    positions = ops.cumsum(ops.ones_like(inp), axis=1) - 1  # 0..T-1 at any length T
    pos = layers.Embedding(32, 32)(positions)
    x = layers.Add()([tok, pos])
    a = layers.MultiHeadAttention(num_heads=4, key_dim=8)(x, x)
    x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, a]))
    f = layers.Dense(64, activation="gelu")(x)
    f = layers.Dense(32)(f)
    x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, f]))
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dense(3)(x)
    rng = np.random.default_rng(15)
    _keras("transformer_block", keras.Model(inp, x),
           [tf.TensorSpec([None, None], tf.int32, name="tokens")],
           [[rng.integers(0, 100, (1, 16)).astype(np.int32)],
            [rng.integers(0, 100, (2, 16)).astype(np.int32)],
            [rng.integers(0, 100, (3, 9)).astype(np.int32)]],
           "Embedding + MultiHeadAttention(4 heads) + LayerNormalization + GELU FFN")


def unet_small():
    """A segmentation net: encoder (Conv2D, BN, ReLU, MaxPooling2D), decoder with
    Conv2DTranspose and UpSampling2D (nearest and bilinear), Concatenate skips, 1x1 sigmoid."""
    inp = keras.Input((64, 64, 3))  # Keras's bilinear UpSampling2D needs a static size

    def cbr(x, f):
        x = layers.Conv2D(f, 3, padding="same", use_bias=False)(x)
        x = layers.BatchNormalization()(x)
        return layers.ReLU()(x)
    e1 = cbr(inp, 8)
    e2 = cbr(layers.MaxPooling2D()(e1), 16)
    e3 = cbr(layers.MaxPooling2D()(e2), 32)
    d2 = layers.Conv2DTranspose(16, 3, strides=2, padding="same")(e3)
    d2 = cbr(layers.Concatenate()([d2, e2]), 16)
    d1 = layers.UpSampling2D(2, interpolation="bilinear")(d2)
    d1 = cbr(layers.Concatenate()([d1, e1]), 8)
    side = layers.UpSampling2D(4)(layers.Conv2D(4, 1)(e3))
    d1 = layers.Concatenate()([d1, side])
    out = layers.Conv2D(2, 1, activation="sigmoid")(d1)
    rng = np.random.default_rng(16)
    _keras("unet_small", keras.Model(inp, out),
           [tf.TensorSpec([None, 64, 64, 3], tf.float32, name="image")],
           [[_img(rng, 1, 64, 64, 3)], [_img(rng, 2, 64, 64, 3)]],
           "U-Net: Conv2DTranspose, UpSampling2D nearest/bilinear, Concatenate, BN",
           calib=_img(rng, 4, 64, 64, 3))


def tf1_session_graph():
    """TF1 style: placeholders and variables in a tf.compat.v1 Graph, run in a Session, frozen
    with tf.compat.v1.graph_util.convert_variables_to_constants."""
    g = tf.Graph()
    rng = np.random.default_rng(17)
    with g.as_default():
        v1 = tf.compat.v1
        x = v1.placeholder(tf.float32, [None, 32, 32, 3], name="input")

        def var(name, shape, lo=-0.3, hi=0.3):
            return tf.Variable(rng.uniform(lo, hi, shape).astype(np.float32), name=name)
        y = tf.nn.conv2d(x, var("w1", [3, 3, 3, 16]), strides=[1, 2, 2, 1], padding="SAME")
        y = tf.nn.bias_add(y, var("b1", [16]))
        y, _, _ = v1.nn.fused_batch_norm(y, var("g1", [16], 0.5, 1.5), var("o1", [16]),
                                         mean=var("m1", [16]), variance=var("v1", [16], 0.5, 1.5),
                                         is_training=False, epsilon=1e-3)
        y = tf.nn.relu6(y)
        y = tf.nn.depthwise_conv2d(y, var("dw", [3, 3, 16, 1]), [1, 1, 1, 1], "SAME")
        y = tf.nn.relu(y)
        y = tf.nn.max_pool2d(y, 2, 2, "VALID")
        y = tf.compat.v1.image.resize_bilinear(y, [16, 16], align_corners=True)
        y = tf.nn.avg_pool2d(y, 2, 2, "SAME")
        y = tf.reduce_mean(y, axis=[1, 2], name="gap")
        y = tf.add(tf.matmul(y, var("fc", [16, 5], -3, 3)), var("fb", [5]), name="logits")
        tf.nn.softmax(y, name="prob")
        with v1.Session(graph=g) as sess:
            sess.run(v1.global_variables_initializer())
            gd = v1.graph_util.convert_variables_to_constants(sess, g.as_graph_def(),
                                                              ["logits", "prob"])
            samples = [[_img(rng, 1, 32, 32, 3)], [_img(rng, 2, 32, 32, 3)]]

            def run(xv):
                return sess.run(["logits:0", "prob:0"], {"input:0": xv})
            _save("tf1_session", gd, run, ["input:0"], ["logits:0", "prob:0"], samples,
                  "TF1 compat Graph + Session, frozen with "
                  "graph_util.convert_variables_to_constants")


def keras_layers():
    """A mix of Keras layers the other models lack: SeparableConv2D, grouped and dilated
    Conv2D, DepthwiseConv2D with depth multiplier 2, PReLU, LeakyReLU, ELU, hard_swish /
    hard_sigmoid / gelu(tanh) / softplus / mish activations, Cropping2D, AveragePooling2D,
    GroupNormalization, LayerNormalization on images, Resizing, Permute, Reshape,
    GlobalMaxPooling2D, UnitNormalization, Concatenate of pooled branches."""
    inp = keras.Input((32, 32, 4))
    x = layers.SeparableConv2D(16, 3, padding="same", depth_multiplier=2)(inp)
    x = layers.PReLU(shared_axes=[1, 2])(x)
    x = layers.Conv2D(16, 3, padding="same", groups=4, activation="hard_swish")(x)
    x = layers.Conv2D(16, 3, padding="same", dilation_rate=2)(x)
    x = layers.LeakyReLU(negative_slope=0.1)(x)
    x = layers.DepthwiseConv2D(3, depth_multiplier=2, padding="valid", activation="elu")(x)
    x = layers.Cropping2D(((1, 2), (2, 1)))(x)
    x = layers.AveragePooling2D(3, strides=2, padding="same")(x)
    x = layers.GroupNormalization(groups=4)(x)
    x = layers.Activation("mish")(x)
    x = layers.LayerNormalization(axis=[1, 2, 3])(x)
    x = layers.Resizing(10, 12, interpolation="bilinear")(x)
    a = layers.Activation("hard_sigmoid")(layers.GlobalMaxPooling2D()(x))
    b = layers.Permute((3, 1, 2))(x)
    b = layers.Reshape((32, 120))(b)
    b = layers.Dense(8, activation=keras.activations.gelu)(b)
    b = layers.Activation("softplus")(layers.Flatten()(b))
    y = layers.Concatenate()([a, layers.UnitNormalization()(b)])
    y = layers.Dense(6)(y)
    rng = np.random.default_rng(19)
    # Second output: the image branch before the heads (a strong signal at every pixel).
    _keras("keras_layers", keras.Model(inp, [y, x]),
           [tf.TensorSpec([None, 32, 32, 4], tf.float32, name="input")],
           [[_img(rng, 1, 32, 32, 4)], [_img(rng, 2, 32, 32, 4)]],
           "assorted Keras layers and activations", calib=_img(rng, 4, 32, 32, 4))


def tf1_quantized():
    """TF1 graph with the quantization ops of TF's tooling: FakeQuantWithMinMaxVars/Args
    (quantization-aware training, variables frozen to constants) on activations, and weights
    stored as quint8/qint8 constants read by Dequantize in each mode (MIN_FIRST, as
    quantize_weights writes them, MIN_COMBINED, SCALED)."""
    g = tf.Graph()
    rng = np.random.default_rng(18)
    v1 = tf.compat.v1
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, 12, 12, 3], name="input")

        def qconst(shape, dtype, lo, hi, mode):
            raw = rng.integers(0, 256, shape) if dtype == tf.quint8 else \
                rng.integers(-127, 128, shape)
            q = tf.constant(raw.astype(np.uint8 if dtype == tf.quint8 else np.int8), dtype=dtype)
            return tf.quantization.dequantize(q, lo, hi, mode=mode)
        y = tf.quantization.fake_quant_with_min_max_vars(
            x, tf.Variable(-1.0), tf.Variable(1.3), num_bits=8)
        y = tf.nn.conv2d(y, qconst([3, 3, 3, 8], tf.quint8, -0.4, 0.5, "MIN_FIRST"), 1, "SAME")
        y = tf.nn.bias_add(y, qconst([8], tf.qint8, -0.2, 0.2, "MIN_COMBINED"))
        y = tf.quantization.fake_quant_with_min_max_args(tf.nn.relu6(y), 0.0, 6.0,
                                                         narrow_range=True)
        y = tf.nn.depthwise_conv2d(y, qconst([3, 3, 8, 1], tf.qint8, -0.6, 0.6, "SCALED"),
                                   [1, 2, 2, 1], "SAME")
        y = tf.quantization.fake_quant_with_min_max_vars(y, tf.Variable(-2.0), tf.Variable(2.0),
                                                         num_bits=7)
        y = tf.reduce_mean(y, axis=[1, 2])
        tf.matmul(y, qconst([8, 4], tf.quint8, -1.0, 1.0, "MIN_COMBINED"), name="logits")
        with v1.Session(graph=g) as sess:
            sess.run(v1.global_variables_initializer())
            gd = v1.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["logits"])
            samples = [[_img(rng, 1, 12, 12, 3)], [_img(rng, 3, 12, 12, 3)]]

            def run(xv):
                return sess.run(["logits:0"], {"input:0": xv})
            _save("tf1_quantized", gd, run, ["input:0"], ["logits:0"], samples,
                  "TF1 graph with FakeQuant (QAT) and Dequantize'd quint8/qint8 weights")


def rnn_stack_while():
    """LSTM (return_sequences=True) feeding a GRU, both unroll=False, over a sequence of any
    length: while loops whose output list is written at the step counter."""
    inp = keras.Input((None,), dtype="int32")
    x = layers.Embedding(200, 16, embeddings_initializer=keras.initializers.RandomNormal(
        stddev=1.0))(inp)
    x = layers.LSTM(16, return_sequences=True)(x)
    x = layers.GRU(12)(x)
    x = layers.Dense(4)(x)
    rng = np.random.default_rng(20)
    _keras("rnn_stack_while", keras.Model(inp, x),
           [tf.TensorSpec([None, None], tf.int32, name="tokens")],
           [[rng.integers(0, 200, s).astype(np.int32)] for s in ((1, 20), (3, 20), (2, 7))],
           "Embedding + LSTM(return_sequences=True) + GRU, unroll=False, any sequence length")


def lstm_text():
    _text_rnn("lstm", True)


def lstm_text_loop():
    _text_rnn("lstm", False)


def gru_text():
    _text_rnn("gru", True)


def gru_text_loop():
    _text_rnn("gru", False)


BUILDERS = (mobilenet_v2, small_resnet, efficientnet_small, conv1d_kws, transformer_block,
            unet_small, keras_layers, tf1_session_graph, tf1_quantized, lstm_text, lstm_text_loop,
            gru_text, gru_text_loop, rnn_stack_while)


def main():
    """Every builder, or those named after OUT_DIR (models.json then keeps the other entries)."""
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "models.json")
    if len(sys.argv) > 2 and os.path.exists(path):
        with open(path) as f:
            MANIFEST.update(json.load(f))
    for fn in BUILDERS:
        if len(sys.argv) > 2 and fn.__name__ not in sys.argv[2:]:
            continue
        keras.utils.set_random_seed(0)  # each model's weights independent of the others
        fn()
    MANIFEST["_tool"] = {"tensorflow": tf.__version__, "keras": keras.__version__}
    with open(path, "w") as f:
        json.dump(MANIFEST, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
