from django.apps import AppConfig


class WaitroomConfig(AppConfig):
    name = "waitroom"
    verbose_name = "Waiting room and waitlist"
