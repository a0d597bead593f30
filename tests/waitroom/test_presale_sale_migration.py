"""waitroom 0016 forward and back with live rows: presale codes and redemptions of two rooms
(two sales) get their own room's sale, the widened uniques keep the same rules, and going
back drops only the copied column."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from tests.bookings.test_sale_migration import latest, migrate
from tests.factories import UserFactory
from tests.waitroom.test_queue_sale_migration import rooms_of_two_sales
from waitroom.models import PresaleCode, PresaleRedemption

BEFORE = [("waitroom", "0015_live_panel")]


def code_and_use(models, room_id: int, sale_id: int | None, code: str) -> None:
    """One code and its redemption, as the code on either side writes them."""
    sale = {} if sale_id is None else {"sale_id": sale_id}
    issued = models["PresaleCode"].objects.create(
        room_id=room_id, code=code, uses_allowed=2, uses=1, **sale
    )
    models["PresaleRedemption"].objects.create(
        room_id=room_id, code_id=issued.pk, customer_id=UserFactory().pk,
        redeemed_at=timezone.now(), **sale,
    )  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_presale_codes_and_redemptions_get_their_rooms_sale_forward_and_back():
    rooms = rooms_of_two_sales()
    new, old_room = rooms
    code_and_use(
        {"PresaleCode": PresaleCode, "PresaleRedemption": PresaleRedemption},
        new.pk, new.sale_id, "NEWCODE22222",
    )  # fmt: skip
    try:
        old = migrate(BEFORE)
        OldCode = old.get_model("waitroom", "PresaleCode")
        assert "sale" not in {f.name for f in OldCode._meta.get_fields()}
        old_models = {m: old.get_model("waitroom", m) for m in ("PresaleCode", "PresaleRedemption")}
        code_and_use(old_models, old_room.pk, None, "OLDCODE33333")  # written by the old code

        migrate(latest())
        for room in rooms:
            codes = PresaleCode.objects.filter(room=room)
            assert set(codes.values_list("sale_id", flat=True)) == {room.sale_id}
            uses = PresaleRedemption.objects.filter(room=room)
            assert set(uses.values_list("sale_id", flat=True)) == {room.sale_id}
        # The widened unique is the same rule: a code is still once per room.
        with pytest.raises(IntegrityError), transaction.atomic():
            PresaleCode.objects.create(room=old_room, sale_id=old_room.sale_id, code="OLDCODE33333")
        back = migrate(BEFORE)
        assert back.get_model("waitroom", "PresaleCode").objects.count() == 2
        assert back.get_model("waitroom", "PresaleRedemption").objects.count() == 2
    finally:
        migrate(latest())
