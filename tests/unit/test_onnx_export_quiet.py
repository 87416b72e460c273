"""The quantizer's notes stay out of the person's terminal (engine/onnx_export.py `library_quiet`)."""

from __future__ import annotations

import logging

from desktop_memory.engine.onnx_export import library_quiet


def test_library_log_lines_on_the_root_logger_are_kept_to_debug(capsys, caplog) -> None:
    def quantizer_like() -> int:
        logging.warning("Please consider to run pre-processing before quantization. Refer to example: ...")
        return 7

    with caplog.at_level(logging.DEBUG):
        assert library_quiet(quantizer_like) == 7
        logging.getLogger("desktop_memory.test").warning("our own words")  # ours still go through
    shown = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in shown] == ["our own words"]
    assert "pre-processing" not in capsys.readouterr().err
    assert any("pre-processing" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)
