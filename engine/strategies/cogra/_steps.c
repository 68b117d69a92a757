/* COGRA's type-grained kernel for count states, compiled (docs/engine.md, "COGRA").
 *
 * The same computation as kernel.py's Kernel.run followed by the generated Python step
 * code, for the queries whose window state holds only counts (COUNT(*) and COUNT(E), no
 * SUM / MIN / MAX, not exact mode) and whose events each match one variable: the steps of
 * engine/steps.h, with panes cut at every window start and end, each step applied to every
 * open window of its pane. Counts are exact 128-bit integers; a count past CAP (10**38 - 1)
 * is saturated (NaN in Python), exactly as the Python kernel keeps it.
 *
 * run(ts, idx, masks, starts, nv, rank, selfloop, start, preds, owners, ends, within, slide
 *     [, multi, per_end])
 *   the arguments of engine/steps.h, then the query's window; a window closes where the
 *   next partition starts. multi: a row may match several variables (each one event of its
 *   time stamp, applied in rank order: the template must not order two variables a row can
 *   match). per_end (no owners): a window's result is the count of each END variable in the
 *   order of ends, kept where one is not zero (engine/shared/subsequence: prefix tries).
 * returns (kids, ks, values) as bytes: int64 partition indexes (into starts) and window
 *   indexes of the closed windows with a trend, and per window its result, 1 + len(owners)
 *   counts summed over the END variables (the trends, then COUNT(E) per owner), as (low,
 *   high) uint64 pairs, all ones for a saturated count; or None where the Python kernel
 *   must run: a visited row matching several variables, several events at one time stamp
 *   and rank None, or a window spanning too many slides.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../../count_pass.h"

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args) { return count_pass(args); }

COMPILED_MODULE(_steps, "COGRA's compiled count kernel.",
                "COGRA's count kernel over many partitions (see the module source).")
