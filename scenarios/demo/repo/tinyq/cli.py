"""The ``tinyq`` command line: enqueue jobs, run workers, inspect a queue.

Examples::

    tinyq enqueue emails.send --arg alice@example.com --delay 30
    tinyq worker --concurrency 8
    tinyq stats
    tinyq dead --queue emails
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from .clock import SystemClock
from .config import Config, load_config
from .job import Job
from .ratelimit import TokenBucket
from .retry import RetryPolicy
from .storage import open_storage
from .worker import WorkerPool

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_STUCK_WORKERS = 3


def _parse_value(text: str) -> object:
    """A CLI argument as JSON if it parses (numbers, lists, true), else as a plain string."""
    try:
        value: object = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tinyq", description="A tiny job queue.")
    parser.add_argument("--config", help="TOML config file (default: ./tinyq.toml if present)")
    sub = parser.add_subparsers(dest="command", required=True)

    enq = sub.add_parser("enqueue", help="add a job to a queue")
    enq.add_argument("task", help="registered task name, e.g. emails.send")
    enq.add_argument("--arg", action="append", default=[], help="positional argument (JSON or text)")
    enq.add_argument("--delay", type=float, default=0.0, help="seconds before the job becomes due")
    enq.add_argument("--priority", type=int, default=0, help="higher runs first among due jobs")
    enq.add_argument("--queue", help="queue name (default: from config)")

    work = sub.add_parser("worker", help="run a worker pool until interrupted")
    work.add_argument("--concurrency", type=int, help="worker threads (default: from config)")
    work.add_argument("--import", dest="imports", action="append", default=[], help="module defining tasks")

    sub.add_parser("stats", help="job counts by state")
    dead = sub.add_parser("dead", help="list dead-lettered jobs")
    dead.add_argument("--queue", help="only this queue")
    return parser


def cmd_enqueue(cfg: Config, args: argparse.Namespace) -> int:
    """Store a new job due ``--delay`` seconds from now and print its id."""
    if args.delay < 0:
        print("tinyq: --delay cannot be negative", file=sys.stderr)
        return EXIT_USAGE
    storage = open_storage(cfg.storage_url)
    try:
        job = Job(
            task=args.task,
            args=tuple(_parse_value(a) for a in args.arg),
            queue=args.queue or cfg.queue,
            priority=args.priority,
            run_at=SystemClock().now() + args.delay,
            max_attempts=cfg.max_attempts,
        )
        storage.put(job)
    finally:
        storage.close()
    print(job.id)
    return EXIT_OK


def cmd_worker(cfg: Config, args: argparse.Namespace) -> int:
    """Run a pool until SIGINT/SIGTERM, then shut down gracefully."""
    for module in args.imports:
        importlib.import_module(module)
    limiter = TokenBucket(cfg.rate_burst, cfg.rate_limit) if cfg.rate_limit else None
    policy = RetryPolicy(max_attempts=cfg.max_attempts, base_delay=cfg.base_delay)
    storage = open_storage(cfg.storage_url)
    pool = WorkerPool(
        storage,
        concurrency=args.concurrency or cfg.concurrency,
        policy=policy,
        queue=cfg.queue,
        limiter=limiter,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    pool.start()
    logging.getLogger("tinyq").info("started %d workers on queue %r", pool.size, cfg.queue)
    stop.wait()
    stuck = pool.shutdown()
    storage.close()
    return EXIT_STUCK_WORKERS if stuck else EXIT_OK


def cmd_stats(cfg: Config, args: argparse.Namespace) -> int:
    storage = open_storage(cfg.storage_url)
    try:
        for state, n in storage.counts().items():
            print(f"{state.value:<10} {n}")
    finally:
        storage.close()
    return EXIT_OK


def cmd_dead(cfg: Config, args: argparse.Namespace) -> int:
    storage = open_storage(cfg.storage_url)
    try:
        for job in storage.dead_letters(args.queue):
            print(f"{job.id}  {job.task}  attempts={job.attempts}  {job.last_error}")
    finally:
        storage.close()
    return EXIT_OK


COMMANDS = {"enqueue": cmd_enqueue, "worker": cmd_worker, "stats": cmd_stats, "dead": cmd_dead}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tinyq`` script; returns the process exit code."""
    args = build_parser().parse_args(argv)
    cfg = load_config(args.config)
    logging.basicConfig(level=cfg.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    return COMMANDS[args.command](cfg, args)


if __name__ == "__main__":
    sys.exit(main())
