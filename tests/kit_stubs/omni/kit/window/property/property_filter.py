"""``PropertyFilter``: the Property window's search text (``name``) and its model."""

import omni.ui as ui


class PropertyFilter:
    def __init__(self):
        self._name_model = ui.SimpleStringModel()

    @property
    def name(self) -> str:
        return self._name_model.as_string

    @name.setter
    def name(self, value: str) -> None:
        self._name_model.as_string = value

    @property
    def name_model(self):
        return self._name_model

    def matches(self, text: str) -> bool:
        return not self.name or self.name.lower() in str(text).lower()
