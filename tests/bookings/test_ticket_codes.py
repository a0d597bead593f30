import pytest

from bookings.ticket_codes import BadTicketCode, TicketContent, sign_ticket, verify_ticket_code

CONTENT = TicketContent("Zx81kQ_pl2mNv0a1", 4711, "12A", "ECONOMY", "Nguyễn Văn An")


def test_a_signed_code_verifies_to_its_content():
    assert verify_ticket_code(sign_ticket(CONTENT)) == CONTENT
    assert verify_ticket_code("  " + sign_ticket(CONTENT) + "\n") == CONTENT  # scanner noise


def test_flipping_any_single_character_makes_the_code_forged():
    code = sign_ticket(CONTENT)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
    for position, original in enumerate(code):
        replacement = alphabet[(alphabet.index(original) + 1) % len(alphabet)]
        forged = code[:position] + replacement + code[position + 1 :]
        with pytest.raises(BadTicketCode):
            verify_ticket_code(forged)


def test_a_code_signed_with_another_key_is_forged(settings):
    code = sign_ticket(CONTENT)
    settings.TICKET_SIGNING_KEYS = {"k1": "someone-elses-key"}
    with pytest.raises(BadTicketCode):
        verify_ticket_code(code)


def test_old_keys_still_verify_after_rotation(settings):
    old = sign_ticket(CONTENT)
    settings.TICKET_SIGNING_KEYS = {"k2": "the-new-key", "k1": settings.TICKET_SIGNING_KEYS["k1"]}
    settings.TICKET_SIGNING_KEY_ID = "k2"
    new = sign_ticket(CONTENT)
    assert new.split(".")[1] == "k2"
    assert verify_ticket_code(old) == verify_ticket_code(new) == CONTENT


@pytest.mark.parametrize(
    "garbage",
    ["", "hello", "SK1.k1.e30", "SK1.k1..", "SK2.k1.e30.abc", "SK1.nokey.e30.abc", "SK1.k1.é.abc"],
)
def test_garbage_is_forged(garbage):
    with pytest.raises(BadTicketCode):
        verify_ticket_code(garbage)


def test_the_longest_name_fits_the_code_column():
    from bookings.models import Ticket

    longest = TicketContent("Zx81kQ_pl2mNv0a1", 2**31, "99K", "BUSINESS", "𝔸" * 120)  # noqa: RUF001 - multi-byte on purpose
    assert len(sign_ticket(longest)) <= Ticket._meta.get_field("code").max_length
