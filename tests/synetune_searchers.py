"""Helpers of the tests of our batched syne-tune searchers (test_synetune_bore.py, test_synetune_kde.py): a
box of floats like the adapter's, results on it, a check that two searcher classes suggest the same, and the
searchers `nasbench run` builds."""
import numpy as np

DIMS = 10


def box_space(dims: int = DIMS) -> dict:
    from syne_tune.config_space import uniform

    return {f"x{k}": uniform(-1.0 - k, 2.0 + k) for k in range(dims)}


def box_results(n: int, seed: int) -> tuple[list[dict], list[float]]:
    """`n` configurations of the box and a loss for each (a smooth function plus noise)."""
    rng = np.random.default_rng(seed)
    configs = [{f"x{k}": float(rng.uniform(-1.0 - k, 2.0 + k)) for k in range(DIMS)} for _ in range(n)]
    losses = [sum((c[f"x{k}"] - 0.3 * k) ** 2 for k in range(DIMS)) + float(rng.normal(0, 0.5)) for c in configs]
    return configs, losses


def assert_same_suggestions(library_class, batched_class, n_results: int, steps: int, seed: int) -> list:
    """Both classes, seeded alike and told the same `n_results` results, suggest the same configuration at
    each of `steps` steps and leave the searcher's and NumPy's global generators (random configurations
    come from the latter) in the same states; each suggestion is then told to both, as a scheduler would.
    Returns the two searchers."""
    configs, losses = box_results(n_results, seed=n_results)
    searchers = []
    for cls in (library_class, batched_class):
        searcher = cls(config_space=box_space(), random_seed=seed)
        for trial_id, (config, loss) in enumerate(zip(configs, losses)):
            searcher.on_trial_complete(trial_id=trial_id, config=config, metric=loss)
        searchers.append(searcher)
    saved = np.random.get_state()
    try:
        for step in range(steps):
            suggested, states = [], []
            for searcher in searchers:
                np.random.seed(1000 + step)
                suggested.append(searcher.suggest())
                states.append((np.random.get_state()[1].tobytes(), searcher.random_state.get_state()[1].tobytes()))
            assert suggested[0] == suggested[1]
            assert states[0] == states[1]
            for searcher in searchers:
                searcher.on_trial_complete(trial_id=n_results + step, config=suggested[0], metric=float(step))
    finally:
        np.random.set_state(saved)
    return searchers


def built_searchers(benchmark, algos) -> list:
    """The searcher of each of `algos` (or, for a multi-fidelity scheduler, the class it builds one from)
    as `nasbench run` builds it on `benchmark`."""
    from benchmarks.core.features import features
    from optimizers.base import SearchInputs
    from optimizers.registry import make_algorithm

    found = []
    for algo in algos:
        algorithm = make_algorithm(algo, None, benchmark.name)
        algorithm.start(SearchInputs(search=benchmark.search, rng=np.random.default_rng(0), seed=0,
                                     features=features(benchmark, algorithm.feature_kind)))
        searcher = algorithm._scheduler.searcher
        found.append(getattr(searcher, "searcher_cls", type(searcher)))
        algorithm.finish()
    return found


def assert_batches_only_its_searcher(use, batched_class, single_fidelity, multi_fidelity, refusal: str) -> None:
    """`use(scheduler)` gives syne-tune's `single_fidelity` scheduler a `batched_class` searcher and its
    `multi_fidelity` one that class for the searchers it builds per result, and refuses ASHA (a random
    searcher) with `refusal`."""
    import pytest
    from syne_tune.optimizer.baselines import ASHA

    single = single_fidelity(box_space(), metric="loss", random_seed=0)
    use(single)
    assert type(single.searcher) is batched_class
    multi = multi_fidelity(box_space(), metric="loss", time_attr="epoch", max_t=50, random_seed=0)
    use(multi)
    assert multi.searcher.searcher_cls is batched_class
    with pytest.raises(TypeError, match=refusal):
        use(ASHA(box_space(), metric="loss", time_attr="epoch", max_t=50, random_seed=0))
