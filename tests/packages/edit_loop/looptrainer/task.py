"""A user's training module that needs one requirement the image does not ship (ct-loop-dep)."""

import ct_loop_dep

VERSION = "v1"  # the line a user edits between runs

print(f"training with ct_loop_dep {ct_loop_dep.__version__}, code {VERSION}")
