def main():
    print("gui")
