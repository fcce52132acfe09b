"""Which public test this is: its name, version and features, as the reports state them."""

TEST_NAME = "mimic_joint"
TEST_VERSION = "1.0.0"
FEATURES = ("FET022_DRIVEN_JOINTS_PHYSX", "FET022_DRIVEN_JOINTS_ISAAC")
NO_FOLLOWERS = "no joint carries PhysxMimicJointAPI or NewtonMimicAPI: nothing to check"
#: the version of the harness's MIM phase whose metrics result.json reproduces
#: (simready_benchmark_kit_suite, FET022 mimic_joint test, ``version="1.1.0"``)
HARNESS_TEST_VERSION = "1.1.0"
