"""The public face of a family subpackage (`optimizers.model_based`, ...): its classes by name, each
module imported only when one of its classes is first used, so that listing or running one algorithm
never imports another family's libraries."""
import importlib


def lazy_face(package: str, classes_of: dict) -> tuple[list, object]:
    """(`__all__`, module `__getattr__`) for `package`; `classes_of`: {module: its public class names}."""
    module_of = {name: module for module, names in classes_of.items() for name in names}

    def __getattr__(name):
        if name in module_of:
            return getattr(importlib.import_module(f"{package}.{module_of[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return list(module_of), __getattr__
