from django.urls import path

from annotation.views import audio, headphone_check, participant, task

app_name = "annotation"

urlpatterns = [
    path("a/audio/<str:token>", audio.audio, name="audio"),
    path("a/headphones/<str:token>.wav", headphone_check.headphone_audio, name="headphone_audio"),
    path("a/headphones-reference.wav", headphone_check.headphone_reference, name="headphone_reference"),
    path("a/headphones-example/<int:interval>.wav", headphone_check.headphone_example, name="headphone_example"),
    path("s/<slug:slug>/", participant.study_entry, name="entry"),
    path("s/<slug:slug>/resume/<str:key>/", participant.study_resume, name="resume"),
    path("s/<slug:slug>/consent/", participant.consent, name="consent"),
    path("s/<slug:slug>/screening/", participant.screening, name="screening"),
    path("s/<slug:slug>/headphones/level/", headphone_check.headphone_level, name="headphone_level"),
    path("s/<slug:slug>/headphones/", headphone_check.headphone_check, name="headphone_check"),
    path("s/<slug:slug>/sound-check/", participant.sound_check, name="sound_check"),
    path("s/<slug:slug>/sound-check/audio.wav", participant.sound_check_audio, name="sound_check_audio"),
    path("s/<slug:slug>/instructions/", participant.instructions, name="instructions"),
    path("s/<slug:slug>/task/", task.task_page, name="task"),
    path("s/<slug:slug>/task/items/<int:item_id>/events", task.task_events, name="task_events"),
    path("s/<slug:slug>/task/items/<int:item_id>/submit", task.task_submit, name="task_submit"),
    path("s/<slug:slug>/done/", participant.done, name="done"),
    path("s/<slug:slug>/thank-you/", participant.screened_out, name="screened_out"),
    path("s/<slug:slug>/ended/", participant.ended, name="ended"),
]
