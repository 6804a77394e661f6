"""What a task does about lost records: fail, skip to the first offset left, or finish."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state import OffsetRange
from kafka_rescalable.state.lost_records import LostRecords, log_ends_early, records_deleted

RANGE = OffsetRange("orders", 3, 10, 20)


def test_deleted_records_fail_the_task_under_fail_on_data_loss() -> None:
    decision = records_deleted(RANGE, 15, fail_on_data_loss=True)
    assert decision.fatal
    assert decision.resume_at is None
    assert decision.message.startswith(
        "orders-3: offsets [10, 15) were deleted before they were read (the partition now "
        "starts at 15)"
    )
    assert "Set 'failOnDataLoss' to false" in decision.message


def test_without_fail_on_data_loss_the_range_goes_on_from_the_first_offset_left() -> None:
    decision = records_deleted(RANGE, 15, fail_on_data_loss=False)
    assert decision == LostRecords(
        "orders-3: offsets [10, 15) were deleted before they were read (the partition now "
        "starts at 15), probably by retention; skipping them because failOnDataLoss is false",
        fatal=False,
        resume_at=15,
    )


def test_a_range_deleted_whole_is_finished() -> None:
    decision = records_deleted(RANGE, 25, fail_on_data_loss=False)
    assert not decision.fatal
    assert decision.resume_at is None
    assert "offsets [10, 20) were deleted" in decision.message


@given(
    start=st.integers(0, 100),
    size=st.integers(1, 50),
    low=st.integers(0, 200),
    fail=st.booleans(),
)
def test_a_skip_resumes_inside_the_range_and_never_before_the_watermark(
    start: int, size: int, low: int, fail: bool
) -> None:
    offset_range = OffsetRange("t", 0, start, start + size)
    decision = records_deleted(offset_range, low, fail)
    assert decision.fatal is fail
    if decision.resume_at is not None:
        assert not fail
        assert max(start, low) == decision.resume_at < offset_range.until
    else:
        assert fail or low >= offset_range.until


def test_a_log_ending_early_fails_under_fail_on_data_loss() -> None:
    decision = log_ends_early(RANGE, 17, fail_on_data_loss=True)
    assert decision.fatal
    assert decision.message.startswith(
        "orders-3: the log ends at 17 but offsets up to 20 were planned; offsets [17, 20) are gone"
    )
    assert decision.message.endswith("Set 'failOnDataLoss' to false to go on with a warning.")


def test_a_log_ending_early_finishes_the_range_otherwise() -> None:
    decision = log_ends_early(RANGE, 17, fail_on_data_loss=False)
    assert not decision.fatal
    assert decision.resume_at is None
    assert decision.message.endswith("; going on because failOnDataLoss is false")
