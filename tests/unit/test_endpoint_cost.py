"""Whether an endpoint's models are free: what the user said, else its address."""

from app.settings import Endpoint
from core.endpoint_cost import by_address, endpoint_free


def test_local_and_private_addresses_are_free_by_default():
    for url in ("http://127.0.0.1:11434/v1", "http://localhost:1234/v1", "http://[::1]:8080/v1",
                "http://192.168.1.20:8000/v1", "http://10.0.0.5/v1", "http://studio.local:8080/v1",
                "http://0.0.0.0:8080/v1", "http://169.254.1.1/v1"):
        assert by_address(url), url
    for url in ("https://api.openai.com/v1", "https://gateway.example.com/v1", "http://8.8.8.8/v1",
                "not a url", ""):
        assert not by_address(url), url


def test_what_the_user_said_wins_over_the_address():
    assert endpoint_free(Endpoint("lab", "http://127.0.0.1:9/v1"))
    assert not endpoint_free(Endpoint("proxy", "http://127.0.0.1:9/v1", runs_here=False))
    assert endpoint_free(Endpoint("box", "https://gpu.example.com/v1", runs_here=True))
    assert not endpoint_free(Endpoint("cloud", "https://gpu.example.com/v1"))


def test_a_free_endpoints_models_are_priced_zero_in_the_run_and_a_paid_ones_are_not():
    from app.settings import Settings, build_run_config
    free = build_run_config(Settings(endpoints=[Endpoint("lab", "http://127.0.0.1:9/v1", ["m"])]),
                            root="lab/m")
    assert free.prices["lab/m"].input_per_m == 0 and free.prices["lab/m"].output_per_m == 0
    paid = build_run_config(Settings(endpoints=[Endpoint("lab", "http://127.0.0.1:9/v1", ["m"], runs_here=False)]),
                            root="lab/m")
    assert "lab/m" not in paid.prices and paid.spec("lab/m").cost == "unknown"
