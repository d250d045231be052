"""The workspace's files as every layer above reads them: the one confinement
(``workspace.py``), images (``images.py``) and the image files a message names
(``image_paths.py``), the shell words a pasted path is written in (``shell_words.py``),
and where the ripgrep binary is (``ripgrep.py``).

The tools stand on it, and so do the front ends, which never import ``tools``.
"""
