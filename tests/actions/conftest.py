"""Both platforms side by side: the Slack app on the mock Web API and the Discord bot on the
fake Discord API, each with its own fixtures (imported here from their own test packages)."""

from tests.discord.conftest import fake_discord, start_bot  # noqa: F401
from tests.slack.conftest import make_slack, one_torch_thread, slack_api  # noqa: F401
