"""How one call is made as a user's may be: its inputs' layout, its model state's layout, its mode."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CallForm:
    """The request fields of a call made other than the judge's own way (dense inputs, dense state, eval
    mode under no_grad). One value travels from the check that draws it to the window that sends it, so
    a new field reaches every call on the way without another argument at each step.

    strided: inputs.STRIDED_LAYOUTS' layout of the inputs; strided_inputs: the inputs' indices it applies
    to (all when None); strided_state: the layout model_state.relay gives the model's parameters and
    buffers; mode: one of model_state.CALL_MODES."""

    strided: str | None = None
    strided_inputs: tuple[int, ...] | None = None
    strided_state: str | None = None
    mode: str | None = None

    def request(self) -> dict:
        """The fields the runner's call request takes (python/vinci_runner/runner.py), only those set."""
        fields: dict = {}
        if self.strided:
            fields["strided"] = self.strided
            if self.strided_inputs is not None:
                fields["strided_inputs"] = list(self.strided_inputs)
        if self.strided_state:
            fields["strided_state"] = self.strided_state
        if self.mode:
            fields["mode"] = self.mode
        return fields


JUDGES_OWN = CallForm()
