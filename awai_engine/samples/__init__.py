"""Sample conversations shipped with AWAI, for ``awai demo`` and the tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Sample:
    path: Path
    channel: str
    featured_message: str
    description: str
    # The embedding backend the sample is read with unless the user chose one: MiniLM cannot
    # read Japanese, so the Japanese sample uses the multilingual encoder.
    embedding_backend: str | None = None


SAMPLES = {
    "en": Sample(
        path=HERE / "team_launch.jsonl",
        channel="demo-team-launch",
        featured_message="m048",
        description=(
            "Sample: a product team planning a launch (55 messages, 4 speakers, English with some"
            " Japanese). Message m048 brings back the battery drain first raised 45 messages earlier."
        ),
    ),
    "ja": Sample(
        path=HERE / "japanese_team.jsonl",
        channel="demo-japanese-team",
        featured_message="m034",
        description=(
            "サンプル: データセンター移行を計画するチーム(39 件、3 人、日本語と英語)。"
            "m034 で、序盤(m002–m005)に日本語で話したバックアップの復元テストの話題が、"
            "英語混じりで戻ってきます。m039 では、田中さんが繰り返してきたデータ消失への"
            "心配が思い込みとして呼び出されます。"
        ),
        embedding_backend="multilingual-use",
    ),
}
