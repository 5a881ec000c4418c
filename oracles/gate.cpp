// Library code for `flce gate` (torch-free; links with the Python host through python_host.hpp).
namespace flce {}
