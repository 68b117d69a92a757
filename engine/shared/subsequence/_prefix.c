/* The subsequence kind's prefix pass (engine/shared/subsequence/prefix.py): a group's
 * fixed-length sequence queries merged into one trie of their variables, run as one template
 * by the count pass of engine/count_pass.h with multi (a row matches a variable of each
 * branch whose type and predicates it meets) and per_end (each query's count is its last
 * variable's count). The arguments and the result are those of COGRA's kernel
 * (engine/strategies/cogra/_steps.c) with multi and per_end set by the caller.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../../count_pass.h"

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args) { return count_pass(args); }

COMPILED_MODULE(_prefix, "The subsequence kind's compiled prefix pass.",
                "The count pass over a trie of sequence queries (see the module source).")
