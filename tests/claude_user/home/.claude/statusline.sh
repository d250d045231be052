#!/bin/sh
# The user's status line: Claude Code's JSON on stdin, one coloured line out.
python3 -c '
import json, os, sys
given = json.load(sys.stdin)
folder = os.path.basename(given["workspace"]["current_dir"])
print("\033[1;34mcc-status\033[0m \033[2m%s\033[0m %s" % (folder, given["model"]["display_name"]))
'
