"""The kinds of job: which row holds each one's progress and which function does its work.

One task (`studio.jobs.tasks.run_job`) runs them all, given a kind and a row's primary key, so
the queue, the runner and recovery treat every kind alike. The work functions live beside the
features they serve and are imported when a job runs (they import the queue themselves).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.module_loading import import_string

from studio.jobs.progress import Reporter
from studio.models import (
    ConversationDraft,
    ImportJob,
    Job,
    OverlapCheck,
    Publication,
    RepairJob,
    ReplayRun,
    RolloutCheck,
    ScrubRun,
    TestRun,
    TrainedModel,
    TuningRun,
)

# A job's work: given its row and its progress callback, the fields to store when it is done.
Work = Callable[[Any, Reporter], dict[str, Any]]


class JobFailed(Exception):
    """The work cannot be done, for a reason a person can act on (stored as the job's error)."""


# A free worker takes the highest priority first (django_tasks_db orders its queue so), so
# a publish, and the model a playground or publish waits for, never queue behind analysis
# (replays, suite runs, checkups, tuning, fix searches) however much of it people started.
PUBLISHING = 20
INTERACTIVE = 10
ANALYSIS = 0


@dataclass(frozen=True)
class Kind:
    model: type[Job]
    work_path: str
    failed: str  # how a failure that was not foreseen is worded: "{failed}: <reason>"
    priority: int = ANALYSIS

    @property
    def work(self) -> Work:
        work: Work = import_string(self.work_path)
        return work


KINDS: dict[str, Kind] = {
    "test_run": Kind(TestRun, "studio.suites.runs.execute_run", "The run failed"),
    "overlap": Kind(OverlapCheck, "studio.suites.runs.execute_overlap", "The checkup failed"),
    "training": Kind(
        TrainedModel, "studio.jobs.training.train", "Training failed", priority=INTERACTIVE
    ),
    "publication": Kind(
        Publication,
        "studio.publishing.versions.execute_publication",
        "Publishing failed",
        priority=PUBLISHING,
    ),
    "replay": Kind(ReplayRun, "studio.traffic.replays.execute_replay", "The replay failed"),
    "tuning": Kind(TuningRun, "studio.suites.checkups.execute_tuning", "Tuning failed"),
    # A check may halt what production serves: it goes before analysis.
    "rollout_check": Kind(
        RolloutCheck,
        "studio.publishing.rollout_guards.execute_check",
        "The rollout's check failed",
        priority=PUBLISHING,
    ),
    "import": Kind(
        ImportJob, "studio.importing.imports.execute_import", "The import failed", INTERACTIVE
    ),
    "scrub": Kind(
        ScrubRun,
        "studio.traffic.scrubs.execute_scrub",
        "Removing the stored texts failed",
        priority=INTERACTIVE,
    ),
    "repair": Kind(
        RepairJob, "studio.suites.repairs.execute_repair", "The search for a fix failed"
    ),
    "conversation_draft": Kind(
        ConversationDraft,
        "studio.authoring.conversation_drafts.execute_draft",
        "Drafting conversations failed",
    ),
}


def kind_of(job: Job) -> str:
    """The kind name of a job row."""
    for name, kind in KINDS.items():
        if isinstance(job, kind.model):
            return name
    raise LookupError(f"{type(job).__name__} is not a kind of job")
