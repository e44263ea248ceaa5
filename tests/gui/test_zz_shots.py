from tests.gui.test_window_caps import _estimate, _run
from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_shots(studio, qloop, server, tmp_path):
    from app.settings import ModelSettings
    from core.config import Price
    window, controller = studio
    window.resize(1366, 768)
    server.script("sub", fn=lambda r: r.prompt.upper())
    server.script("root", replies=[code("print(llm_query_batched(['a', 'b', 'c']))"), code("FINAL('**Two** of three: A and B')")])
    prepare(window, controller, server, tmp_path, qloop)
    controller.settings.models["lab/root"] = ModelSettings(price=Price(2.5, 10.0))
    controller.settings.models["lab/sub"] = ModelSettings(price=Price(0.15, 0.6))
    qp = window.question_panel
    qp.set_caps({"max_cost_usd": 0.01})
    _estimate(window, controller, qloop)
    qloop.run_until_complete(wait_until(lambda: True))
    window.grab().save("/tmp/shot-blocked.png")
    qp.fix_buttons[0].click()
    controller.settings.caps["max_sub_calls"] = 1
    _estimate(window, controller, qloop)
    _run(window, controller, qloop)
    async def settle():
        import asyncio
        await asyncio.sleep(0.5)
    run_async(qloop, settle())
    window.grab().save("/tmp/shot-limited.png")
