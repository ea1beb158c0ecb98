"""The storage and reading tests of the embedded default, run again on a Chroma server and
PostgreSQL (see ``conftest.py``): the same test functions, only the fixtures differ.

A representative part, to keep the suite fast: ingest, edit and delete; the no-future-leak
invariant with fewer examples; two stores sharing one database; the crash repair at start; and
readings (flow, association, isolation between channels).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import test_concurrency as concurrency
from tests import test_doctor as doctor
from tests import test_flow_and_association as reading
from tests import test_ingest as ingest
from tests import test_invariant as invariant
from tests import test_vector_segments as segments

# Each test stores on a Chroma server, most several seconds: `make test-fast` leaves them out.
pytestmark = pytest.mark.slow

INVARIANT_EXAMPLES = 15

test_reingesting_the_same_messages_stores_them_once = (
    ingest.test_reingesting_the_same_messages_stores_them_once
)
test_an_edit_replaces_thoughts_and_vectors_and_keeps_the_old_text_as_history = (
    ingest.test_an_edit_replaces_thoughts_and_vectors_and_keeps_the_old_text_as_history
)
test_a_delete_removes_the_text_from_sql_and_chroma_and_it_never_comes_back = (
    ingest.test_a_delete_removes_the_text_from_sql_and_chroma_and_it_never_comes_back
)
test_words_edited_back_into_a_withdrawn_message_are_stored_again_at_its_place = (
    ingest.test_words_edited_back_into_a_withdrawn_message_are_stored_again_at_its_place
)
test_a_forget_me_makes_the_speakers_withdrawn_messages_gone_for_good = (
    ingest.test_a_forget_me_makes_the_speakers_withdrawn_messages_gone_for_good
)
test_a_withdrawal_undone_before_another_process_looks_still_changes_the_removal_mark = (
    ingest.test_a_withdrawal_undone_before_another_process_looks_still_changes_the_removal_mark
)
test_messages_arriving_out_of_order_are_read_in_time_order = (
    ingest.test_messages_arriving_out_of_order_are_read_in_time_order
)
test_the_read_model_survives_a_restart = ingest.test_the_read_model_survives_a_restart

# A channel's vectors in several segments of the server's Chroma (the file scan of a forget is the
# embedded folder's: a server's files are its operator's, docs/privacy.md).
small_segments = segments.small_segments
test_writes_fill_segments_in_turn_and_touch_only_the_newest = (
    segments.test_writes_fill_segments_in_turn_and_touch_only_the_newest
)
test_edits_and_deletes_reach_the_segment_that_holds_the_message = (
    segments.test_edits_and_deletes_reach_the_segment_that_holds_the_message
)
test_dropping_a_channel_drops_every_segment = segments.test_dropping_a_channel_drops_every_segment

two_stores = invariant.two_stores
test_later_messages_edits_and_deletes_never_change_an_earlier_context = settings(
    max_examples=INVARIANT_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)(
    given(
        spec=st.lists(invariant.message_strategy, min_size=2, max_size=14),
        data=st.data(),
    )(
        invariant.test_later_messages_edits_and_deletes_never_change_an_earlier_context.hypothesis.inner_test
    )
)
test_a_fresh_data_folder_with_only_the_prefix_gives_the_same_context = (
    invariant.test_a_fresh_data_folder_with_only_the_prefix_gives_the_same_context
)

test_two_processes_sharing_the_database_store_each_message_once_and_see_each_other = (
    concurrency.test_two_processes_sharing_the_database_store_each_message_once_and_see_each_other
)
test_a_message_removed_by_another_process_while_it_is_being_stored_leaves_no_vector = (
    concurrency.test_a_message_removed_by_another_process_while_it_is_being_stored_leaves_no_vector
)

clean_state = doctor.clean_state
test_audit_names_each_injected_fault = doctor.test_audit_names_each_injected_fault
test_every_start_repairs_what_a_crash_left_and_costs_only_counts_otherwise = (
    doctor.test_every_start_repairs_what_a_crash_left_and_costs_only_counts_otherwise
)

test_thread_reply_flow_is_its_thread_and_top_level_flow_skips_thread_replies = (
    reading.test_thread_reply_flow_is_its_thread_and_top_level_flow_skips_thread_replies
)
test_association_recalls_a_returning_topic_with_its_reasons = (
    reading.test_association_recalls_a_returning_topic_with_its_reasons
)
test_activation_grows_with_recurrence_and_decays_with_age = (
    reading.test_activation_grows_with_recurrence_and_decays_with_age
)
test_channels_are_isolated = reading.test_channels_are_isolated
