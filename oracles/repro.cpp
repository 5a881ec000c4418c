// Library code for `flce repro` (torch-free; links with the Python host through python_host.hpp).
namespace flce {}
