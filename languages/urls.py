from django.urls import path
from django.views.i18n import JavaScriptCatalog

from languages.views import set_language

app_name = "languages"

urlpatterns = [
    path("i18n/setlang/", set_language, name="set_language"),
    path("i18n/catalog.js", JavaScriptCatalog.as_view(), name="javascript-catalog"),
]
