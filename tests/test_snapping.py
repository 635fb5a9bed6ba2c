"""Snapping a feature-space point to the nearest architecture by cosine distance (real 10-d features)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial import distance

from optimizers.snapping import cosine_similarities, nearest_by_cosine, unit_rows


@pytest.fixture(scope="module")
def features(ptb):
    return ptb.search.shipped_features


def test_nearest_matches_brute_force_cosine_distance(features):
    rng = np.random.default_rng(0)
    low, high = features.min(axis=0), features.max(axis=0)
    for _ in range(20):
        vector = rng.uniform(low, high)
        expected = int(np.argmin(distance.cdist([vector], features, "cosine")[0]))
        assert nearest_by_cosine(features, vector) == expected


def test_an_existing_architecture_snaps_to_itself_and_scale_does_not_matter(features):
    rows = np.random.default_rng(1).choice(len(features), size=25, replace=False)
    for row in rows:
        assert nearest_by_cosine(features, features[row]) == row
        assert nearest_by_cosine(features, 3.5 * features[row]) == row


def test_exclude_mask_or_rows_picks_the_nearest_remaining_row(features):
    row = 123
    sims = cosine_similarities(features, features[row])
    second = int(np.argsort(-sims)[1])
    assert nearest_by_cosine(features, features[row], exclude=[row]) == second
    mask = np.zeros(len(features), dtype=bool)
    mask[[row, second]] = True
    third = int(np.argsort(-sims)[2])
    assert nearest_by_cosine(features, features[row], exclude=mask) == third
    with pytest.raises(ValueError):
        nearest_by_cosine(features, features[row], exclude=np.ones(len(features), dtype=bool))


def test_unit_rows_are_cached_and_unit_length(features):
    unit = unit_rows(features)
    assert unit_rows(features) is not None and np.shares_memory(unit, unit_rows(features))
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, rtol=1e-12)


# Entries are 0 or of magnitude >= 1e-6: below that, squares underflow (1e-161 ** 2 == 0) and the two
# cosine computations round differently, which says nothing about the search.
ENTRIES = st.one_of(st.just(0.0), st.floats(1e-6, 10), st.floats(-10, -1e-6))


@settings(max_examples=60, deadline=None)
@given(matrix=arrays(np.float64, st.tuples(st.integers(2, 30), st.integers(1, 6)), elements=ENTRIES),
       data=st.data())
def test_result_has_the_highest_cosine_similarity(matrix, data):
    vector = data.draw(arrays(np.float64, matrix.shape[1], elements=ENTRIES))
    row = nearest_by_cosine(matrix, vector)
    assert 0 <= row < len(matrix)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(vector)
    cos = np.divide(matrix @ vector, norms, out=np.zeros(len(matrix)), where=norms > 0)
    assert cos[row] >= cos.max() - 1e-9
