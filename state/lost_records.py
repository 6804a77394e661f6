"""What a task does about records of its range that are gone: fail, skip them, or finish.

Pure: the executor looks up the partition's low watermark (or meets the end of its log), calls
:func:`records_deleted` or :func:`log_ends_early` with it, and then raises, logs, re-assigns or
finishes as the answer says (:mod:`kafka_rescalable.executor.range_events`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_rescalable.state.partitions import OffsetRange

__all__ = ["LostRecords", "log_ends_early", "records_deleted"]


@dataclass(frozen=True)
class LostRecords:
    """The answer about one range's lost records.

    Parameters
    ----------
    message : str
        The whole text: under ``failOnDataLoss=true`` it says how to go on, under ``false``
        what the task does instead.
    fatal : bool
        Fail the task with ``message``; otherwise log it as a warning and go on.
    resume_at : int or None
        The offset the range goes on from, when it goes on; ``None`` when the range is
        finished (or the task fails).
    """

    message: str
    fatal: bool
    resume_at: int | None = None


def records_deleted(
    offset_range: OffsetRange, low_watermark: int, fail_on_data_loss: bool
) -> LostRecords:
    """Decide when the start of ``offset_range`` is gone (retention or truncation).

    The partition now starts at ``low_watermark``; the offsets of the range below it are lost.
    Without ``failOnDataLoss`` the range goes on from the first offset still there, or is
    finished when none of it is left.
    """
    start, until = offset_range.start, offset_range.until
    lost_until = min(max(low_watermark, start), until)
    what = (
        f"{offset_range.topic}-{offset_range.partition}: offsets [{start}, {lost_until}) "
        f"were deleted before they were read (the partition now starts at {low_watermark}), "
        "probably by retention"
    )
    if fail_on_data_loss:
        advice = ". Set 'failOnDataLoss' to false to skip lost records with a warning instead."
        return LostRecords(what + advice, fatal=True)
    message = f"{what}; skipping them because failOnDataLoss is false"
    return LostRecords(message, fatal=False, resume_at=lost_until if lost_until < until else None)


def log_ends_early(offset_range: OffsetRange, log_end: int, fail_on_data_loss: bool) -> LostRecords:
    """Decide when the log ends at ``log_end``, before the end planned for ``offset_range``.

    Records were removed after the range was planned; without ``failOnDataLoss`` the range is
    finished, since there is nothing left to read in it.
    """
    until = offset_range.until
    what = (
        f"{offset_range.topic}-{offset_range.partition}: the log ends at {log_end} but offsets "
        f"up to {until} were planned; offsets [{log_end}, {until}) are gone "
        "(topic deleted and re-created, or an unclean leader election)"
    )
    if fail_on_data_loss:
        return LostRecords(
            what + ". Set 'failOnDataLoss' to false to go on with a warning.", fatal=True
        )
    return LostRecords(f"{what}; going on because failOnDataLoss is false", fatal=False)
