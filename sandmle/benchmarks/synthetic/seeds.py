"""Seed tasks: the structural DNA of every MLE-bench-lite competition and a few others.

Facts (modality, metric, target shape, id scheme) come from MLE-bench's lite grading spec;
the package carries them here so nothing outside it is read at run time. Micro tasks cap
class counts (120 dog breeds become 5 classes); audio stays audio (short WAV clips) and
ranking stays ranking (MAP@k over a small catalogue).
Text normalization stays sequence-to-sequence (``seq2seq``: token ``before`` -> ``after``)
and document denoising stays image-to-image (pixel values of clean pages).
"""

from __future__ import annotations

from sandmle.benchmarks.synthetic.blueprint import MODALITIES, StructuralDNA
from sandmle.errors import SandmleError

# id, original modality, micro modality, task type, metric, target kind, micro outputs,
# original outputs, id scheme, balance, extra flags ("ordinal", "positive", "num=k", "cat=k")
# fmt: off
_TABLE: list[tuple[str, str, str, str, str, str, int, int, str, float, str]] = [
    ("aerial-cactus-identification", "image", "image", "binary", "roc_auc", "prob", 2, 2, "hex", 0.7, ""),
    ("aptos2019-blindness-detection", "image", "image", "multiclass", "quadratic_weighted_kappa", "label", 5, 5, "hex", 0.5, "ordinal"),
    ("denoising-dirty-documents", "image", "image", "image-to-image", "rmse", "value", 1, 1, "int", 0.5, ""),
    ("detecting-insults-in-social-commentary", "text", "text", "binary", "roc_auc", "prob", 2, 2, "int", 0.3, ""),
    ("dog-breed-identification", "image", "image", "multiclass", "multiclass_log_loss", "prob", 5, 120, "hex", 0.5, ""),
    ("dogs-vs-cats-redux-kernels-edition", "image", "image", "binary", "binary_log_loss", "prob", 2, 2, "int", 0.5, ""),
    ("histopathologic-cancer-detection", "image", "image", "binary", "roc_auc", "prob", 2, 2, "hex", 0.4, ""),
    ("jigsaw-toxic-comment-classification-challenge", "text", "text", "multilabel", "mean_columnwise_roc_auc", "prob", 3, 6, "hex", 0.35, ""),
    ("leaf-classification", "tabular", "tabular", "multiclass", "multiclass_log_loss", "prob", 5, 99, "int", 0.5, "num=6"),
    ("mlsp-2013-birds", "audio", "audio", "multilabel", "mean_columnwise_roc_auc", "prob", 3, 19, "int", 0.4, ""),
    ("new-york-city-taxi-fare-prediction", "tabular", "tabular", "regression", "rmse", "value", 1, 1, "prefixed", 0.5, "num=4,cat=1"),
    ("nomad2018-predict-transparent-conductors", "tabular", "tabular", "regression", "mean_columnwise_rmsle", "value", 2, 2, "int", 0.5, "positive,num=5,cat=1"),
    ("plant-pathology-2020-fgvc7", "image", "image", "multiclass", "mean_columnwise_roc_auc", "prob", 4, 4, "prefixed", 0.5, ""),
    ("random-acts-of-pizza", "text", "text", "binary", "roc_auc", "prob", 2, 2, "prefixed", 0.3, ""),
    ("ranzcr-clip-catheter-line-classification", "image", "image", "multilabel", "mean_columnwise_roc_auc", "prob", 3, 9, "hex", 0.4, ""),
    ("siim-isic-melanoma-classification", "image", "image", "binary", "roc_auc", "prob", 2, 2, "prefixed", 0.25, ""),
    ("spooky-author-identification", "text", "text", "multiclass", "multiclass_log_loss", "prob", 3, 3, "prefixed", 0.5, ""),
    ("tabular-playground-series-dec-2021", "tabular", "tabular", "multiclass", "accuracy", "label", 4, 7, "int", 0.5, "num=6,cat=2"),
    ("tabular-playground-series-may-2022", "tabular", "tabular", "binary", "roc_auc", "prob", 2, 2, "int", 0.5, "num=6,cat=1"),
    ("text-normalization-challenge-english-language", "text", "text", "seq2seq", "accuracy", "label", 1, 1, "prefixed", 0.5, ""),
    ("text-normalization-challenge-russian-language", "text", "text", "seq2seq", "accuracy", "label", 1, 1, "prefixed", 0.5, ""),
    ("the-icml-2013-whale-challenge-right-whale-redux", "audio", "audio", "binary", "roc_auc", "prob", 2, 2, "prefixed", 0.35, ""),
    # Not in MLE-bench-lite: structures the lite set lacks.
    ("titanic", "tabular", "tabular", "binary", "accuracy", "label", 2, 2, "int", 0.4, "num=4,cat=2"),
    ("house-prices-advanced-regression-techniques", "tabular", "tabular", "regression", "rmsle", "value", 1, 1, "int", 0.5, "positive,num=6,cat=2"),
    ("allstate-claims-severity", "tabular", "tabular", "regression", "mae", "value", 1, 1, "int", 0.5, "positive,num=5,cat=2"),
    ("lish-moa", "tabular", "tabular", "multilabel", "mean_columnwise_roc_auc", "prob", 3, 206, "hex", 0.35, "num=6"),
    ("digit-recognizer", "image", "image", "multiclass", "accuracy", "label", 4, 10, "int", 0.5, ""),
    ("sentiment-analysis-on-movie-reviews", "text", "text", "multiclass", "macro_f1", "label", 3, 5, "int", 0.5, ""),
    ("store-sales-time-series-forecasting", "time-series", "time-series", "forecasting", "rmsle", "value", 1, 1, "prefixed", 0.5, "positive"),
    ("web-traffic-time-series-forecasting", "time-series", "time-series", "forecasting", "mae", "value", 1, 1, "prefixed", 0.5, "positive"),
    ("bike-sharing-demand", "time-series", "time-series", "forecasting", "rmse", "value", 1, 1, "int", 0.5, "positive"),
    ("h-and-m-personalized-fashion-recommendations", "tabular", "tabular", "ranking", "map_at_12", "ranked", 30, 105542, "hex", 0.5, "num=5,cat=2"),
]
# fmt: on


def _parse(row: tuple[str, str, str, str, str, str, int, int, str, float, str]) -> StructuralDNA:
    sid, orig, modality, task_type, metric, kind, outputs, orig_outputs, ids, balance, flags = row
    flag_set = {f for f in flags.split(",") if f}
    counts = dict(f.split("=") for f in flag_set if "=" in f)
    return StructuralDNA(
        seed_task=sid,
        original_modality=orig,
        modality=modality,  # type: ignore[arg-type]
        task_type=task_type,  # type: ignore[arg-type]
        metric=metric,
        target_kind=kind,  # type: ignore[arg-type]
        n_outputs=outputs,
        original_outputs=orig_outputs,
        ordinal="ordinal" in flag_set,
        positive="positive" in flag_set,
        n_numeric=int(counts.get("num", 0)),
        n_categorical=int(counts.get("cat", 0)),
        id_scheme=ids,  # type: ignore[arg-type]
        balance=balance,
    )


SEEDS: dict[str, StructuralDNA] = {row[0]: _parse(row) for row in _TABLE}
LITE_SEEDS: tuple[str, ...] = tuple(row[0] for row in _TABLE[:22])


def get_seed(seed_id: str) -> StructuralDNA:
    """The DNA of one seed task; an unknown id is a one-line user error."""
    if seed_id not in SEEDS:
        raise SandmleError(f"unknown seed task {seed_id!r} (see `sandmle synth seeds`)")
    return SEEDS[seed_id]


def select_seeds(
    modalities: list[str] | None = None, seed_ids: list[str] | None = None
) -> list[StructuralDNA]:
    """Seeds to draw from, interleaved by modality so any prefix of a pack mixes modalities."""
    for modality in modalities or []:
        if modality not in MODALITIES:
            raise SandmleError(f"unknown modality {modality!r} (known: {', '.join(MODALITIES)})")
    chosen = [get_seed(s) for s in seed_ids] if seed_ids else list(SEEDS.values())
    if modalities:
        chosen = [s for s in chosen if s.modality in modalities]
    if not chosen:
        raise SandmleError("no seed task matches the given --modalities and --seeds")
    by_modality = [[s for s in chosen if s.modality == m] for m in MODALITIES]
    interleaved: list[StructuralDNA] = []
    for rank in range(max(len(group) for group in by_modality)):
        interleaved += [group[rank] for group in by_modality if rank < len(group)]
    return interleaved
