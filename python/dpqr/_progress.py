"""The progress of a release on stderr, as ``dpqr release`` shows it on a terminal: a tqdm
bar when tqdm is installed, otherwise one line rewritten in place.

Fed by the pipeline's progress events (crates/dpqr-python/src/module.rs,
``progress_callback``): ``"stage"`` and ``"counting"`` name what runs without a percentage
(counting the workload on the data has none: its share done would reveal n), ``"round"`` is
adaptive-projection's line for a round, ``"step"`` is ``done`` of ``total`` steps of a
stage. Like the command line's, the bar shows no timing — no elapsed time, no rate, no ETA:
progress is output of the release, and a stage's duration grows with the data
(docs/privacy.md, "What `dpqr release` outputs").
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional, TextIO, Union

#: What ``progress=`` takes: ``None`` (a bar when stderr is a terminal), ``True``,
#: ``False``, or a callable receiving every event as ``(kind, message, done, total)``.
ProgressOption = Union[None, bool, Callable[[str, str, Optional[int], Optional[int]], Any]]

#: tqdm's bar without its timings (elapsed, remaining, rate).
_BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}"


class StderrProgress:
    """The events of one release drawn on ``stream`` (stderr): a tqdm bar per stage with a
    percentage when tqdm can be imported, otherwise one line rewritten with ``\\r``."""

    def __init__(self, stream: Optional[TextIO] = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        self._tqdm = tqdm
        self._bar: Any = None
        #: the stage with a percentage being shown
        self._stage: Optional[str] = None
        #: the line without a bar: what runs, and the last round's line
        self._status = ""
        self._note = ""
        self._width = 0

    def __call__(self, kind: str, message: str, done: Optional[int], total: Optional[int]) -> None:
        if kind == "step" and done is not None and total is not None:
            self._step(message, done, total)
        elif kind == "round":
            self._note = message
            if self._bar is not None:
                self._bar.set_postfix_str(message, refresh=True)
            else:
                self._draw()
        else:
            # a stage without a percentage begins
            self.close()
            self._status = message
            self._draw()

    def _step(self, stage: str, done: int, total: int) -> None:
        if stage != self._stage:
            self.close()
            self._stage = stage
            if self._tqdm is not None:
                self._bar = self._tqdm(
                    total=total, desc=stage, file=self.stream, leave=False,
                    bar_format=_BAR_FORMAT, dynamic_ncols=True,
                )
        if self._bar is not None:
            self._bar.total = total
            self._bar.n = done
            self._bar.refresh()
            return
        self._status = f"{stage}: {done} of {total} ({done * 100 // max(total, 1)}%)"
        self._draw()

    def _draw(self) -> None:
        """The line without a bar, in place of the last one."""
        text = self._status + ("  " + self._note if self._note else "")
        pad = max(self._width - len(text), 0)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._width = len(text)

    def close(self) -> None:
        """End the current stage's bar or line: nothing is left on stderr."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
        self._stage = None
        self._status = self._note = ""


def reporter(progress: ProgressOption) -> Optional[Callable[..., Any]]:
    """The callable the release's events go to for ``progress=``: ``None`` for none."""
    if progress is None:
        isatty = getattr(sys.stderr, "isatty", None)
        progress = bool(isatty and isatty())
    if progress is True:
        return StderrProgress()
    if progress is False:
        return None
    if callable(progress):
        return progress
    raise TypeError(
        f"progress={progress!r}: give True, False, None (a bar when stderr is a terminal) or "
        "a callable taking (kind, message, done, total)"
    )
