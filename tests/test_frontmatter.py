"""The one front matter reader (agent_tui/frontmatter.py): YAML between two --- lines."""

from __future__ import annotations

import pytest

from agent_tui.frontmatter import FrontMatterError, key_line, read_front_matter


def test_front_matter_and_body_with_the_body_line():
    text = "---\nname: code-reviewer\ntools: Read, Grep\n---\nYou review.\n"
    front = read_front_matter(text)
    assert front.present
    assert front.meta == {"name": "code-reviewer", "tools": "Read, Grep"}
    assert front.body == "You review.\n"
    assert front.body_line == 5


def test_yaml_values_lists_and_nested_maps():
    text = "---\nname: x\ntools:\n  - Read\n  - Bash\nmetadata:\n  version: \"1.2\"\n---\nbody"
    front = read_front_matter(text)
    assert front.meta["tools"] == ["Read", "Bash"]
    assert front.meta["metadata"] == {"version": "1.2"}


def test_no_front_matter_is_all_body():
    front = read_front_matter("# Title\n\nname: not front matter\n")
    assert not front.present and front.meta == {}
    assert front.body.startswith("# Title")


def test_crlf_and_a_byte_order_mark():
    front = read_front_matter("\ufeff---\r\nname: win\r\n---\r\nbody\r\n")
    assert front.meta == {"name": "win"} and front.body.strip() == "body"


def test_an_unclosed_block_says_line_1():
    with pytest.raises(FrontMatterError) as exc:
        read_front_matter("---\nname: x\ndescription: y\n")
    assert exc.value.line == 1 and "never closed" in exc.value.message


def test_bad_yaml_names_the_line_of_the_file():
    text = "---\nname: x\ndescription: fine\ntools: [Read, Grep\nmodel: haiku\n---\nbody"
    with pytest.raises(FrontMatterError) as exc:
        read_front_matter(text)
    assert "not valid YAML" in exc.value.message
    assert exc.value.line in (4, 5, 6)  # the list opened on line 4 runs into the end


def test_bad_indentation_names_its_line():
    text = "---\nname: x\n  description: indented wrongly\n---\n"
    with pytest.raises(FrontMatterError) as exc:
        read_front_matter(text)
    assert exc.value.line == 3


def test_a_colon_in_an_unquoted_value_is_read_as_text():
    # strict YAML refuses this; real files are full of it
    text = ("---\nname: explainer\ndescription: Explains code. Use when: the user asks\n"
            "metadata:\n  author: someone\n---\nbody")
    front = read_front_matter(text)
    assert front.meta["description"] == "Explains code. Use when: the user asks"
    assert front.meta["metadata"] == {"author": "someone"}


def test_a_list_at_the_top_is_refused():
    with pytest.raises(FrontMatterError) as exc:
        read_front_matter("---\n- a\n- b\n---\nbody")
    assert "key: value" in exc.value.message and exc.value.line == 2


def test_no_python_objects_are_built():
    with pytest.raises(FrontMatterError):
        read_front_matter("---\nname: !!python/object/apply:os.system ['true']\n---\n")


def test_key_line():
    text = "---\nname: a\ndescription: b\nmodel: haiku\n---\nmodel: not this\n"
    assert key_line(text, "model") == 4
    assert key_line(text, "tools") is None


def test_a_key_that_is_not_text_is_named_with_its_line():
    with pytest.raises(FrontMatterError) as exc:
        read_front_matter("---\nname: x\n123: number key\n---\n")
    assert exc.value.line == 3 and "123" in exc.value.message
