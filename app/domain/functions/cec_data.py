"""The CEC organisers' shift, rotation and shuffle data files.

absrank's CEC functions are numpy translations of the organisers' C code; the numbers they need
(shift vectors ``o``, rotation matrices ``M``, shuffle permutations) are the organisers' data
files. absrank does not vendor them. It reads them from an installed package that ships them
unchanged: ``opfunu`` (GPL-3.0; its ``cec_based/data_<year>`` folders hold the organisers' files).
The package is *located* with :func:`importlib.util.find_spec` and never imported, so none of its
code (formulas, random-state side effects, ``exit()`` calls) runs in absrank; only the text files
are parsed, with :func:`numpy.loadtxt`. The README records this licence decision.

References
----------
.. [1] P. N. Suganthan et al., CEC 2005, 2017, 2020 and 2022 bound-constrained single-objective
       benchmark packages (the data files ``input_data/*.txt`` and their 2005 equivalents).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np

from app.domain.errors import NotApplicable
from app.domain.functions.registry import FloatArray, IndexArray

__all__ = [
    "DATA_PACKAGE",
    "data_dir",
    "load_indices",
    "load_matrix",
    "load_numbers",
    "load_vector_rows",
]

DATA_PACKAGE = "opfunu"
"""The installed distribution whose ``cec_based/data_<year>`` folders are read."""


@functools.cache
def data_dir(year: int) -> Path:
    """Folder of the organisers' data files of one CEC suite.

    Parameters
    ----------
    year : int
        2005, 2017, 2020 or 2022.

    Returns
    -------
    pathlib.Path
        ``<site-packages>/opfunu/cec_based/data_<year>``.

    Raises
    ------
    NotApplicable
        If the package is not installed or lacks the folder (``field="function_id"``); install
        it with ``pip install 'absrank[cec]'`` (or ``pip install opfunu``).
    """
    spec = importlib.util.find_spec(DATA_PACKAGE)
    if spec is None or spec.origin is None:
        raise NotApplicable(
            f"the CEC {year} data files are not installed: absrank reads the organisers' shift "
            f"and rotation files from the '{DATA_PACKAGE}' package (pip install 'absrank[cec]')",
            field="function_id",
        )
    folder = Path(spec.origin).parent / "cec_based" / f"data_{year}"
    if not folder.is_dir():
        raise NotApplicable(
            f"{folder} is missing: the installed '{DATA_PACKAGE}' does not ship the CEC {year} "
            "data files",
            field="function_id",
        )
    return folder


@functools.lru_cache(maxsize=1024)
def _load(year: int, name: str) -> FloatArray:
    path = data_dir(year) / name
    if not path.is_file():
        raise NotApplicable(f"CEC {year} data file {name} is missing from {path.parent}")
    array = np.loadtxt(path, dtype=np.float64, ndmin=2)
    array.flags.writeable = False
    return array


def load_matrix(year: int, name: str) -> FloatArray:
    """A whitespace-separated numeric data file as a read-only 2-D float64 array.

    Parameters
    ----------
    year : int
        The suite (selects the folder, see :func:`data_dir`).
    name : str
        File name inside the folder, e.g. ``"M_1_D10.txt"``.

    Returns
    -------
    ndarray, shape (rows, columns)
        Cached per file; read-only.

    Raises
    ------
    NotApplicable
        The folder or the file is missing.
    """
    return _load(year, name)


def load_vector_rows(year: int, name: str, rows: int, dim: int) -> FloatArray:
    """The first ``dim`` entries of the first ``rows`` rows of a data file.

    Shift files hold one vector per row, often longer than ``dim`` (the organisers store 100
    entries and use the first ``D``).

    Returns
    -------
    ndarray, shape (rows, dim)
        Read-only.

    Raises
    ------
    NotApplicable
        The file is missing or has fewer rows or columns than asked.
    """
    data = _load(year, name)
    if data.shape[0] < rows or data.shape[1] < dim:
        raise NotApplicable(
            f"CEC {year} data file {name} has shape {data.shape}; need at least ({rows}, {dim})"
        )
    return data[:rows, :dim]


def load_numbers(year: int, name: str, count: int) -> FloatArray:
    """The first ``count`` numbers of a data file, in reading order.

    This is what the organisers' C code gets from ``count`` successive ``fscanf(fpt, "%lf")``
    calls: the file read row by row, whatever its line breaks. Composition functions read
    ``cf_num`` stacked ``D x D`` matrices this way from ``M_<n>_D<D>.txt``.

    Parameters
    ----------
    year : int
        The suite (selects the folder, see :func:`data_dir`).
    name : str
        File name inside the folder.
    count : int
        How many numbers to read.

    Returns
    -------
    ndarray, shape (count,)
        Read-only float64.

    Raises
    ------
    NotApplicable
        The file is missing or holds fewer than ``count`` numbers.
    """
    data = _load(year, name).reshape(-1)
    if data.size < count:
        raise NotApplicable(
            f"CEC {year} data file {name} holds {data.size} numbers; the code reads {count}"
        )
    return data[:count]


def load_indices(year: int, name: str, count: int, *, blocks: int = 1) -> IndexArray:
    """The shuffle permutations of a hybrid function, as 0-based column indices.

    The C code reads ``count`` integers (1-based positions) from ``shuffle_data_<n>_D<D>.txt``
    and uses ``y[i] = z[S[i] - 1]``. A composition of hybrids reads ``blocks`` such
    permutations, one after the other.

    Parameters
    ----------
    year : int
        The suite.
    name : str
        File name inside the folder.
    count : int
        Length ``D`` of one permutation.
    blocks : int, optional
        Number of consecutive permutations to read.

    Returns
    -------
    ndarray, shape (blocks, count)
        Read-only int64, each row a permutation of ``0 .. count - 1``.

    Raises
    ------
    NotApplicable
        The file is missing, too short, or a block is not a permutation of ``1 .. count``.
    """
    values = load_numbers(year, name, count * blocks)
    indices = values.astype(np.int64) - 1
    expected = np.arange(count)
    if not np.array_equal(indices + 1, values) or any(
        not np.array_equal(np.sort(row), expected) for row in indices.reshape(blocks, count)
    ):
        raise NotApplicable(f"CEC {year} data file {name} does not hold permutations of 1..{count}")
    indices = indices.reshape(blocks, count)
    indices.flags.writeable = False
    return indices
