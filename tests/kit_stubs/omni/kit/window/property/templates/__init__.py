from .simple_property_widget import (  # noqa: F401
    HORIZONTAL_SPACING,
    LABEL_HEIGHT,
    LABEL_WIDTH,
    PropertyWidget,
    SimplePropertyWidget,
    build_frame_header,
)
