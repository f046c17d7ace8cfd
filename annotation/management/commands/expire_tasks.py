from django.core.management.base import BaseCommand

from annotation.services.assignment import tasks_expire


class Command(BaseCommand):
    help = (
        "Expire every open task past its time limit, in all studies, returning its unsubmitted clips "
        "to the pool. Claims do this for their own study; run this from cron so that idle studies and "
        "top-up plans see the released clips too."
    )

    def handle(self, *args, **options):
        expired = tasks_expire()
        self.stdout.write(f"{expired} task(s) expired.")
