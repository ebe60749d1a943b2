"""The plumbing every implementation shares, so that the lesson files can read as lessons.

    config.py          Settings from the environment and .env, validated once
    endpoint.py        where the model lives (a real endpoint or the embedded server)
    meter.py           every request and response of a run, seen at the HTTP layer
    implementation.py  a lesson's run_agent plus its facts (About), and the two protocol adapters
    runner.py          one implementation x one prompt -> one RunRecord
    run_record.py      the run record and the Status enum
    trace.py           the articles' trace printer
    cli.py             the command line every stage shares
    arguments.py       one-line argparse errors
    text.py            small text helpers
"""
