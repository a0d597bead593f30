"""The demo's airports in German and Russian (issue 31: city and airport names in the
customer's language): code -> (city_de, name_de, city_ru, name_ru).  Migration 0013 fills the
same names into existing rows; staff edit them in the airport admin."""

LOCAL_NAMES = {
    "SGN": (
        "Ho-Chi-Minh-Stadt",
        "Internationaler Flughafen Tan Son Nhat",
        "Хошимин",
        "Международный аэропорт Таншоннят",
    ),
    "HAN": ("Hanoi", "Internationaler Flughafen Noi Bai", "Ханой", "Международный аэропорт Нойбай"),
    "DAD": (
        "Đà Nẵng",
        "Internationaler Flughafen Đà Nẵng",
        "Дананг",
        "Международный аэропорт Дананг",
    ),
    "FRA": (
        "Frankfurt am Main",
        "Flughafen Frankfurt am Main",
        "Франкфурт-на-Майне",
        "Аэропорт Франкфурт-на-Майне",
    ),
    "MUC": (
        "München",
        "Flughafen München Franz Josef Strauß",
        "Мюнхен",
        "Аэропорт Мюнхен имени Франца Йозефа Штрауса",
    ),
    "BER": ("Berlin", "Flughafen Berlin Brandenburg", "Берлин", "Аэропорт Берлин-Бранденбург"),
    "SVO": (
        "Moskau",
        "Internationaler Flughafen Scheremetjewo",
        "Москва",
        "Международный аэропорт Шереметьево",
    ),
    "LED": ("Sankt Petersburg", "Flughafen Pulkowo", "Санкт-Петербург", "Аэропорт Пулково"),
}


def local_name_fields(code: str) -> dict[str, str]:
    """The four model fields for `code`, or {} when the table has no entry."""
    if code not in LOCAL_NAMES:
        return {}
    city_de, name_de, city_ru, name_ru = LOCAL_NAMES[code]
    return {"city_de": city_de, "name_de": name_de, "city_ru": city_ru, "name_ru": name_ru}
