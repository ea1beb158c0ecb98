import pytest

from awai_engine.samples import SAMPLES
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from bots.terminal.transcript import read_transcript


@pytest.mark.slow
def test_demo_sample_reading_recalls_the_returning_topic(runtime: Runtime) -> None:
    sample = SAMPLES["en"]
    transcript = read_transcript(sample.path, sample.channel, 10**9)
    runtime.engine.ingest(transcript.utterances)
    reading = runtime.engine.read(transcript.channel, sample.featured_message, EVERYTHING)
    assert reading.offline and reading.interpretation is None
    sources = {item.source.message_id for item in reading.context.associations}
    assert sources & {"m003", "m005", "m006"}
