"""Progress of the Spark jobs an evaluation starts, read from Spark's public status tracker.

A thread polls :meth:`pyspark.SparkContext.statusTracker` while the evaluation's action runs
and advances the caller's task by the Spark tasks completed in the jobs that started since
(one Spark task is one bucket of queries: nothing finer). Without a progress, nothing polls.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rankflavor.base.progress import Progress, task

#: Seconds between two polls of the status tracker.
POLL_SECONDS = 0.2


@contextmanager
def spark_progress(spark: Any, progress: Progress | None, description: str) -> Iterator[None]:
    """Report the Spark tasks completed inside the ``with`` block to ``progress``."""
    if progress is None:
        yield
        return
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(None))
    reported = 0
    bar = task(progress, description, None)

    def completed() -> int:
        total = 0
        for job_id in set(tracker.getJobIdsForGroup(None)) - before:
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else ():
                stage = tracker.getStageInfo(stage_id)
                total += stage.numCompletedTasks if stage is not None else 0
        return total

    def poll() -> None:
        nonlocal reported
        while True:
            stopped = stop.wait(POLL_SECONDS)
            now = completed()
            if now > reported:
                bar.advance(now - reported)
                reported = now
            if stopped:
                return

    stop = threading.Event()
    thread = threading.Thread(target=poll, name="rankflavor-spark-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.close()


__all__ = ["POLL_SECONDS", "spark_progress"]
